#include "report/report_table.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "report/frame_name.h"

namespace perfring::report {
namespace {

using symbolize::kNone;
using symbolize::Location;
using symbolize::Profile;

// A row's identity: the values of the sort keys in use (the others stay 0).
struct RowKey {
  uint32_t comm = 0;
  int32_t tid = 0;
  int32_t cpu = 0;
  uint32_t mapping = 0;
  uint32_t function = 0;  // the symbol; kNone with `address` for an unresolved one
  uint64_t address = 0;
  uint32_t srcline = 0;   // index into the event's srcline strings
  auto Tie() const { return std::tie(comm, tid, cpu, mapping, function, address, srcline); }
  bool operator==(const RowKey& o) const { return Tie() == o.Tie(); }
  template <typename H>
  friend H AbslHashValue(H h, const RowKey& k) {
    return H::combine(std::move(h), k.comm, k.tid, k.cpu, k.mapping, k.function, k.address,
                      k.srcline);
  }
};

// The values of the sample-side keys in use (comm, tid, cpu; the others stay 0).
struct SideKey {
  uint32_t comm = 0;
  int32_t tid = 0;
  int32_t cpu = 0;
  bool operator==(const SideKey& o) const {
    return std::tie(comm, tid, cpu) == std::tie(o.comm, o.tid, o.cpu);
  }
  template <typename H>
  friend H AbslHashValue(H h, const SideKey& k) {
    return H::combine(std::move(h), k.comm, k.tid, k.cpu);
  }
};

// Samples of one event with the same stack and the same sample-side keys,
// summed: what the rows and call graphs are built from.
struct Group {
  uint32_t stack = kNone;
  uint32_t side = 0;       // index of its SideKey
  uint64_t period = 0;
  int32_t first_tid = -1;  // the thread of its first sample
};

// Where a row's key sits in a group's stack (leaf first).
struct Contribution {
  uint32_t group;
  uint32_t position;
};

struct Row {
  RowKey key;
  uint32_t location = kNone;  // one location of the row, for its dso and symbol
  uint32_t part = kNone;      // its location part (RenderEvent)
  uint32_t side = 0;
  uint32_t comm = kNone;
  int32_t tid = -1;
  int32_t cpu = -1;
  uint64_t self = 0;
  uint64_t children = 0;
  uint32_t last_group = kNone;  // the group that last added to `children`
  // perf's hist entry keeps the thread of the sample that made it, and the
  // longest call chain drawn under it (children mode ties: RowOrder).
  int32_t first_tid = -1;
  uint32_t max_depth = 0;
};

// RowOrder's words: one per sort key (6 at most) and sym's two of collapse order.
constexpr size_t kMaxOrderWords = 8;

// Rows from which the table is sorted and written in two halves at once
// (the busy bench file's `--sort sym` table: 41,000 rows, a sort of 57 M
// instructions and a text of 3 MB, after the resolution has ended and the
// second CPU is idle). A thread costs tens of microseconds.
constexpr size_t kRowsForTwoThreads = 8192;

struct Uses {
  bool comm = false, tid = false, cpu = false, dso = false, sym = false, srcline = false;
};

Uses UsesOf(const std::vector<SortKey>& keys) {
  Uses u;
  for (SortKey k : keys) {
    switch (k) {
      case SortKey::kComm: u.comm = true; break;
      case SortKey::kPid: u.tid = true; u.comm = true; break;
      case SortKey::kCpu: u.cpu = true; break;
      case SortKey::kDso: u.dso = true; break;
      case SortKey::kSym: u.sym = true; break;
      case SortKey::kSrcline: u.srcline = true; break;
    }
  }
  return u;
}

// perf's srcline: "file.c:42", "function+OFFSET", "??:0".
std::string SrclineOf(const Profile& profile, const Location& loc) {
  const absl::string_view srcfile = profile.source_file(loc);
  if (loc.line != 0 && !srcfile.empty()) {
    size_t slash = srcfile.rfind('/');
    return absl::StrCat(slash == absl::string_view::npos ? srcfile : srcfile.substr(slash + 1), ":",
                        loc.line);
  }
  if (loc.function != kNone)
    return absl::StrCat(profile.functions[loc.function].name, "+", loc.symbol_offset);
  return "??:0";
}

// The srcline strings of a Profile's locations, interned (only with the key).
struct Srclines {
  std::vector<uint32_t> of_location;
  std::vector<std::string> strings;
};

Srclines SrclinesOf(const Profile& profile) {
  Srclines out;
  absl::flat_hash_map<std::string, uint32_t> index;
  out.of_location.reserve(profile.locations.size());
  for (const Location& loc : profile.locations) {
    auto [it, inserted] =
        index.try_emplace(SrclineOf(profile, loc), static_cast<uint32_t>(out.strings.size()));
    if (inserted) out.strings.push_back(it->first);
    out.of_location.push_back(it->second);
  }
  return out;
}

RowKey KeyOf(const Profile& profile, const Uses& uses, const Srclines& srclines,
             const SideKey& group, uint32_t loc_index) {
  const Location& loc = profile.locations[loc_index];
  RowKey key;
  if (uses.srcline) key.srcline = srclines.of_location[loc_index];
  if (uses.comm) key.comm = group.comm;
  if (uses.tid) key.tid = group.tid;
  if (uses.cpu) key.cpu = group.cpu;
  if (uses.dso) key.mapping = loc.mapping;
  if (uses.sym) {
    key.function = loc.function;
    if (loc.function == kNone) {
      key.mapping = loc.mapping;
      key.address = loc.mapping != kNone ? loc.dso_offset : loc.address;
    }
  }
  return key;
}

std::string Percent(uint64_t part, uint64_t total) {
  double p = total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
  return absl::StrFormat("%.2f%%", p);
}

// perf's convert_unit: "881 ", "4K", "1M".
std::string SampleCount(uint64_t n) {
  char unit = ' ';
  for (char u : {'K', 'M', 'G'}) {
    if (n <= 1000) break;
    n /= 1000;
    unit = u;
  }
  return absl::StrCat(n, std::string(1, unit));
}

std::string PadRight(absl::string_view s, size_t width) {
  std::string out(s);
  if (out.size() < width) out.append(width - out.size(), ' ');
  return out;
}

std::string PadLeft(absl::string_view s, size_t width) {
  std::string out;
  if (s.size() < width) out.assign(width - s.size(), ' ');
  out.append(s.data(), s.size());
  return out;
}

// ---- call graphs: perf's callchain tree and its `graph` printing ----------

// A trie of the row's chains, one node per frame; perf's radix-tree nodes
// (runs of frames with one way on and no chain ending inside) are formed
// when printing. Frames are one node when they name the same function
// (perf's CCKEY_FUNCTION), or the same address when unresolved: the
// caller gives each location that class (FrameClasses).
struct CallTree {
  struct Node {
    uint32_t location = kNone;
    uint32_t frame_class = kNone;
    uint64_t hit = 0;    // period of the chains ending here
    uint64_t cumul = 0;  // period of the chains through here
    std::vector<uint32_t> children;
  };
  std::vector<Node> nodes{1};
  // (parent, class) -> node, for the parents of many children; the others'
  // few children are looked through.
  absl::flat_hash_map<uint64_t, uint32_t> index;
  static constexpr size_t kLookedThrough = 8;

  // `chain` is `n` locations, walked forward from `first` (step 1) or
  // backward (step -1).
  void Add(const uint32_t* first, uint32_t n, int step, const std::vector<uint32_t>& class_of,
           uint64_t period) {
    uint32_t at = 0;
    nodes[0].cumul += period;
    for (uint32_t i = 0; i < n; ++i, first += step) {
      const uint32_t loc_index = *first;
      const uint32_t frame_class = class_of[loc_index];
      uint32_t next = Child(at, frame_class);
      if (next == kNone) {
        next = static_cast<uint32_t>(nodes.size());
        nodes.push_back(Node{loc_index, frame_class, 0, 0, {}});
        std::vector<uint32_t>& kids = nodes[at].children;
        kids.push_back(next);
        if (kids.size() > kLookedThrough) {
          // Past the threshold every child is in the index.
          const size_t from = kids.size() == kLookedThrough + 1 ? 0 : kids.size() - 1;
          for (size_t k = from; k < kids.size(); ++k)
            index.emplace(uint64_t{at} << 32 | nodes[kids[k]].frame_class, kids[k]);
        }
      }
      at = next;
      nodes[at].cumul += period;
    }
    nodes[at].hit += period;
  }

 private:
  uint32_t Child(uint32_t at, uint32_t frame_class) const {
    const std::vector<uint32_t>& kids = nodes[at].children;
    if (kids.size() <= kLookedThrough) {
      for (uint32_t k : kids)
        if (nodes[k].frame_class == frame_class) return k;
      return kNone;
    }
    auto it = index.find(uint64_t{at} << 32 | frame_class);
    return it == index.end() ? kNone : it->second;
  }
};

// Each location's class for CallTree: its function, or an index of its
// address for an unresolved one (after the functions' indices).
std::vector<uint32_t> FrameClasses(const Profile& profile) {
  std::vector<uint32_t> out(profile.locations.size());
  absl::flat_hash_map<uint64_t, uint32_t> of_address;
  for (size_t i = 0; i < profile.locations.size(); ++i) {
    const Location& loc = profile.locations[i];
    if (loc.function != kNone) {
      out[i] = loc.function;
    } else {
      auto [it, inserted] = of_address.try_emplace(
          loc.address, static_cast<uint32_t>(profile.functions.size() + of_address.size()));
      out[i] = it->second;
    }
  }
  return out;
}

class GraphPrinter {
 public:
  GraphPrinter(const Profile& profile, const CallTree& tree, uint64_t total, uint64_t min_hit,
               std::string* out)
      : profile_(profile), tree_(tree), total_(total), min_hit_(min_hit), out_(out) {}

  // callchain__fprintf_graph: a single branch at the top that holds all of
  // the row's period (`row_period`) is printed as "---" and its frames,
  // without its percent (the row's own); then the tree, with a blank line
  // after it when anything was printed.
  void Print(uint64_t row_period, bool skip_first_frame) {
    size_t before = out_->size();
    uint32_t root = 0;
    size_t left = 0;
    std::vector<std::vector<uint32_t>> top = Branches(0);
    if (top.size() == 1 && tree_.nodes[top[0][0]].cumul == row_period) {
      bool printed = false;
      for (size_t i = 0; i < top[0].size(); ++i) {
        if (i == 0 && skip_first_frame) continue;
        Margin(left);
        if (!printed) {
          out_->append("|\n");
          Margin(left);
          out_->append("---");
          left += 3;
          printed = true;
        }
        absl::StrAppend(out_, Name(top[0][i]), "\n");
      }
      root = top[0].back();
    }
    std::vector<bool> mask = {true};
    Level(root, 1, mask, left);
    if (out_->size() != before) out_->append("\n");
  }

 private:
  // The children of `node` as perf's nodes (runs of trie nodes), those
  // under the threshold left out, the heaviest first.
  std::vector<std::vector<uint32_t>> Branches(uint32_t node) const {
    std::vector<uint32_t> kids = tree_.nodes[node].children;
    kids.erase(std::remove_if(kids.begin(), kids.end(),
                              [&](uint32_t k) { return tree_.nodes[k].cumul < min_hit_; }),
               kids.end());
    // Equal ones in perf's order of a node's children (callchain.c's
    // match_chain with CCKEY_FUNCTION: the greater dso, then the greater
    // symbol start, or address when unresolved, first). perf's dsos compare
    // by their address in its memory, which nothing in the file tells: the
    // mapping's index (the order perfring met them) stands in for it.
    std::stable_sort(kids.begin(), kids.end(), [&](uint32_t a, uint32_t b) {
      if (tree_.nodes[a].cumul != tree_.nodes[b].cumul)
        return tree_.nodes[a].cumul > tree_.nodes[b].cumul;
      return SiblingKey(a) > SiblingKey(b);
    });
    std::vector<std::vector<uint32_t>> runs;
    for (uint32_t k : kids) {
      std::vector<uint32_t> run = {k};
      while (tree_.nodes[run.back()].hit == 0 && tree_.nodes[run.back()].children.size() == 1)
        run.push_back(tree_.nodes[run.back()].children[0]);
      runs.push_back(std::move(run));
    }
    return runs;
  }

  std::pair<uint32_t, uint64_t> SiblingKey(uint32_t node) const {
    const Location& loc = profile_.locations[tree_.nodes[node].location];
    const uint32_t mapping = loc.mapping == kNone ? 0 : loc.mapping + 1;
    return {mapping, loc.function != kNone ? loc.dso_offset - loc.symbol_offset : loc.address};
  }

  void Level(uint32_t node, size_t depth, std::vector<bool> mask, size_t left) {
    std::vector<std::vector<uint32_t>> branches = Branches(node);
    std::vector<bool> new_mask = mask;
    for (size_t b = 0; b < branches.size(); ++b) {
      // The last branch closes its level's pipe.
      if (b + 1 == branches.size()) new_mask[depth - 1] = false;
      Margin(left);  // the separator line keeps the old mask
      for (size_t i = 0; i < depth; ++i) out_->append(mask[i] ? "|          " : "           ");
      out_->append("\n");
      const std::vector<uint32_t>& run = branches[b];
      for (size_t f = 0; f < run.size(); ++f) {
        Margin(left);
        for (size_t i = 0; i < depth; ++i) {
          out_->append(new_mask[i] ? "|" : " ");
          if (f == 0 && i == depth - 1)
            absl::StrAppend(out_, "--", Percent(tree_.nodes[run[0]].cumul, total_), "--");
          else
            out_->append("          ");
        }
        absl::StrAppend(out_, Name(run[f]), "\n");
      }
      std::vector<bool> child_mask = new_mask;
      child_mask.push_back(true);
      Level(run.back(), depth + 1, child_mask, left);
    }
  }

  void Margin(size_t left) { out_->append(12 + left, ' '); }

  // callchain_list__sym_name: the symbol, or the address in hex.
  std::string Name(uint32_t node) const {
    const Location& loc = profile_.locations[tree_.nodes[node].location];
    if (loc.function != kNone) return profile_.functions[loc.function].name;
    return absl::StrFormat("%#x", loc.address);
  }

  const Profile& profile_;
  const CallTree& tree_;
  uint64_t total_, min_hit_;
  std::string* out_;
};

// ---- one event's section ---------------------------------------------------

struct Column {
  std::string header;
  bool right = false;
};

Column ColumnOf(SortKey k) {
  switch (k) {
    case SortKey::kComm: return {"Command", false};
    case SortKey::kDso: return {"Shared Object", false};
    case SortKey::kSym: return {"Symbol", false};
    case SortKey::kPid: return {"Pid:Command", true};
    case SortKey::kCpu: return {"CPU", true};
    case SortKey::kSrcline: return {"Source:Line", false};
  }
  return {};
}

absl::string_view CommOf(const Profile& profile, const Row& row) {
  if (row.comm != kNone && row.comm < profile.comms.size()) return profile.comms[row.comm];
  return ":-1";
}

size_t DecimalWidth(int64_t v) {
  size_t n = v < 0 ? 2 : 1;
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  for (; u >= 10; u /= 10) ++n;
  return n;
}

// The length of the row's cell of key `k` (AppendCell writes it), without
// writing it: the columns' widths take every row, the text only the rows
// printed. `comm_width` is the pid column's widest command.
size_t CellWidth(const Profile& profile, const Srclines& srclines, SortKey k, const Row& row,
                 size_t comm_width) {
  switch (k) {
    case SortKey::kComm: return CommOf(profile, row).size();
    case SortKey::kDso:
      return DsoShortName(profile, profile.locations[row.location].mapping).size();
    case SortKey::kSym: {
      const Location& loc = profile.locations[row.location];
      if (loc.function != kNone) return 4 + profile.functions[loc.function].name.size();
      // TableSymbolName's "%#.16x": 16 digits, and "0x" but for zero.
      return 4 + ((loc.mapping != kNone ? loc.dso_offset : loc.address) == 0 ? 16 : 18);
    }
    case SortKey::kPid:
      return std::max<size_t>(7, DecimalWidth(row.tid)) + 1 +
             std::max(CommOf(profile, row).size(), comm_width);
    case SortKey::kCpu: return std::max<size_t>(3, DecimalWidth(row.cpu));
    case SortKey::kSrcline: return srclines.strings[row.key.srcline].size();
  }
  return 0;
}

// The row's cell of key `k`, as perf prints it.
void AppendCell(const Profile& profile, const Srclines& srclines, SortKey k, const Row& row,
                size_t comm_width, std::string* out) {
  switch (k) {
    case SortKey::kComm: absl::StrAppend(out, CommOf(profile, row)); return;
    case SortKey::kDso:
      absl::StrAppend(out, DsoShortName(profile, profile.locations[row.location].mapping));
      return;
    case SortKey::kSym: {
      const Location& loc = profile.locations[row.location];
      out->append(IsKernelFrame(profile, loc) ? "[k] " : "[.] ");
      if (loc.function != kNone) out->append(profile.functions[loc.function].name);
      else out->append(TableSymbolName(profile, loc));
      return;
    }
    case SortKey::kPid: {
      absl::StrAppendFormat(out, "%7d:", row.tid);
      const absl::string_view comm = CommOf(profile, row);
      absl::StrAppend(out, comm);
      if (comm.size() < comm_width) out->append(comm_width - comm.size(), ' ');
      return;
    }
    case SortKey::kCpu: absl::StrAppendFormat(out, "%3d", row.cpu); return;
    case SortKey::kSrcline: out->append(srclines.strings[row.key.srcline]); return;
  }
}

// perf's Children comparison (hist.c's __hpp__sort_acc, with call graphs
// on): two rows of equal Children made by the same thread put the caller
// above the callee, the one with the longer call chain under it first in
// caller order (the shorter in callee order), before Self and the keys. Rows
// made by other threads are not compared so: that order is not transitive,
// and a sort cannot take it. Within each run of equal Children, each
// thread's rows are put in that order in the places they hold.
void PutCallersFirst(const std::vector<Row>& rows, bool caller_order,
                     std::vector<uint32_t>* order) {
  std::vector<uint32_t>& o = *order;
  struct Place {
    int32_t tid;
    uint32_t at;  // index into `o`
  };
  std::vector<Place> places;
  std::vector<uint32_t> thread_rows;
  for (size_t begin = 0, end; begin < o.size(); begin = end) {
    end = begin + 1;
    while (end < o.size() && rows[o[end]].children == rows[o[begin]].children) ++end;
    if (end - begin < 2) continue;
    // The run's places, thread by thread (in order within each).
    places.clear();
    for (size_t i = begin; i < end; ++i)
      places.push_back({rows[o[i]].first_tid, static_cast<uint32_t>(i)});
    std::stable_sort(places.begin(), places.end(),
                     [](const Place& a, const Place& b) { return a.tid < b.tid; });
    for (size_t t = 0, u; t < places.size(); t = u) {
      u = t + 1;
      while (u < places.size() && places[u].tid == places[t].tid) ++u;
      if (u - t < 2) continue;
      thread_rows.clear();
      for (size_t k = t; k < u; ++k) thread_rows.push_back(o[places[k].at]);
      std::stable_sort(thread_rows.begin(), thread_rows.end(), [&](uint32_t a, uint32_t b) {
        return caller_order ? rows[a].max_depth > rows[b].max_depth
                            : rows[a].max_depth < rows[b].max_depth;
      });
      for (size_t k = t; k < u; ++k) o[places[k].at] = thread_rows[k - t];
    }
  }
}

// perf's order of the rows (hist.c's output resort): the heaviest first
// (Children, then Self, in children mode), then each sort key in turn by its
// output comparison (sort.c's se_sort, else se_cmp): comm, the dso's short
// name and srcline ascending as strings (no dso last), pid and cpu
// ascending, sym by name with unresolved addresses after the named ones (two
// unresolved tie). Rows equal in all of that come in the order perf collapsed
// them in (se_collapse, else se_cmp, key by key): the same for every key but
// sym, whose collapse order is the dso's short name then the symbol's start
// address, or for two unresolved rows their address (the dso offset, or the
// address under no map). Last, perfring's own row key, so that the order is
// total. Each comparison is on integers: names are ranked once.
std::vector<uint32_t> RowOrder(const Profile& profile, const std::vector<SortKey>& sort,
                               const Srclines& srclines, const std::vector<Row>& rows,
                               const std::vector<uint32_t>& shown, bool children, bool call_graph,
                               bool caller_order) {
  // Ranks of strings in strcmp order (std::string's compare is unsigned bytewise as strcmp).
  // The names are gathered first: a comparison then reads two names'
  // characters, not the tables that lead to them (for the functions, two
  // more cache misses each, about 16 comparisons a name).
  auto rank = [](size_t n, auto name_of) {
    std::vector<absl::string_view> names(n);
    for (uint32_t i = 0; i < n; ++i) names[i] = name_of(i);
    std::vector<uint32_t> by_name(n);
    for (uint32_t i = 0; i < n; ++i) by_name[i] = i;
    std::sort(by_name.begin(), by_name.end(),
              [&](uint32_t a, uint32_t b) { return names[a] < names[b]; });
    std::vector<uint64_t> out(n);
    for (uint32_t i = 0; i < n; ++i)
      out[by_name[i]] =
          i > 0 && names[by_name[i]] == names[by_name[i - 1]] ? out[by_name[i - 1]] : i;
    return out;
  };
  const Uses uses = UsesOf(sort);
  std::vector<uint64_t> comm_rank, dso_rank, srcline_rank, function_rank;
  if (uses.comm)
    comm_rank = rank(profile.comms.size() + 1, [&](uint32_t i) {
      return i < profile.comms.size() ? absl::string_view(profile.comms[i])
                                      : absl::string_view(":-1");
    });
  if (uses.dso || uses.sym)
    dso_rank = rank(profile.mappings.size(),
                    [&](uint32_t i) { return DsoShortName(profile, i); });
  if (uses.srcline)
    srcline_rank = rank(srclines.strings.size(),
                        [&](uint32_t i) { return absl::string_view(srclines.strings[i]); });
  if (uses.sym) {
    // Only the functions of the rows are ranked.
    std::vector<uint32_t> used;
    std::vector<bool> seen(profile.functions.size(), false);
    for (uint32_t i : shown)
      if (rows[i].key.function != kNone && !seen[rows[i].key.function]) {
        seen[rows[i].key.function] = true;
        used.push_back(rows[i].key.function);
      }
    std::vector<uint64_t> used_rank = rank(used.size(), [&](uint32_t i) {
      return absl::string_view(profile.functions[used[i]].name);
    });
    function_rank.assign(profile.functions.size(), 0);
    for (size_t i = 0; i < used.size(); ++i) function_rank[used[i]] = used_rank[i];
  }
  auto comm_of = [&](const Row& r) {
    return comm_rank[r.comm < profile.comms.size() ? r.comm : profile.comms.size()];
  };
  auto dso_of = [&](uint32_t mapping) {  // no dso last
    return mapping == kNone ? UINT64_MAX : dso_rank[mapping];
  };
  // A signed value in an unsigned word, order kept.
  auto signed_word = [](int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); };

  struct SortEntry {
    uint64_t weight, self;
    uint64_t words[kMaxOrderWords];  // the keys' output order, then sym's collapse order
    uint32_t row;
  };
  std::vector<SortEntry> entries(shown.size());
  for (size_t n = 0; n < shown.size(); ++n) {
    const uint32_t i = shown[n];
    const Row& r = rows[i];
    const Location& loc = profile.locations[r.location];
    SortEntry& e = entries[n];
    e.weight = children ? r.children : r.self;
    e.self = r.self;
    e.row = i;
    size_t w = 0;
    for (SortKey k : sort) {
      switch (k) {
        case SortKey::kComm: e.words[w++] = comm_of(r); break;
        case SortKey::kPid: e.words[w++] = signed_word(r.tid); break;
        case SortKey::kCpu: e.words[w++] = signed_word(r.cpu); break;
        case SortKey::kDso: e.words[w++] = dso_of(loc.mapping); break;
        case SortKey::kSym:
          e.words[w++] = loc.function == kNone ? UINT64_MAX : function_rank[loc.function];
          break;
        case SortKey::kSrcline: e.words[w++] = srcline_rank[r.key.srcline]; break;
      }
    }
    if (uses.sym) {
      if (loc.function != kNone) {
        e.words[w++] = dso_of(loc.mapping);
        e.words[w++] = loc.dso_offset - loc.symbol_offset;  // the symbol's start
      } else {
        e.words[w++] = r.key.address;
        e.words[w++] = 0;
      }
    }
  }
  const size_t words = sort.size() + (uses.sym ? 2 : 0);
  // A total order (the row keys are distinct): any sort gives the same.
  auto before = [&](const SortEntry& a, const SortEntry& b) {
    if (a.weight != b.weight) return a.weight > b.weight;
    if (a.self != b.self) return a.self > b.self;
    for (size_t w = 0; w < words; ++w)
      if (a.words[w] != b.words[w]) return a.words[w] < b.words[w];
    return rows[a.row].key.Tie() < rows[b.row].key.Tie();
  };
  std::vector<uint32_t> order(entries.size());
  if (entries.size() < kRowsForTwoThreads) {
    std::sort(entries.begin(), entries.end(), before);
    for (size_t i = 0; i < entries.size(); ++i) order[i] = entries[i].row;
  } else {
    // Each half sorted on a thread, then merged into the order.
    const auto middle = entries.begin() + static_cast<std::ptrdiff_t>(entries.size() / 2);
    std::thread second([&] { std::sort(middle, entries.end(), before); });
    std::sort(entries.begin(), middle, before);
    second.join();
    auto a = entries.begin(), b = middle;
    for (uint32_t& row : order) {
      const bool take_b = a == middle || (b != entries.end() && before(*b, *a));
      row = (take_b ? b++ : a++)->row;
    }
  }
  if (children && call_graph) PutCallersFirst(rows, caller_order, &order);
  return order;
}

void RenderEvent(const Profile& profile, const ReportOptions& options, uint32_t event,
                 bool children, bool call_graph, bool caller_order, std::string* out) {
  const Uses uses = UsesOf(options.sort);
  const Srclines srclines = uses.srcline ? SrclinesOf(profile) : Srclines{};

  // Samples summed by stack and the sample-side keys. The side keys are
  // interned (the sums come a thread at a time: the last one is kept at
  // hand); a group is then (side, stack): found by a table indexed by stack
  // when there is one side, else hashed as one integer.
  const bool one_side = !uses.comm && !uses.tid && !uses.cpu;
  std::vector<SideKey> sides;
  absl::flat_hash_map<SideKey, uint32_t> side_index;
  std::vector<Group> groups;
  absl::flat_hash_map<uint64_t, uint32_t> group_index;
  std::vector<uint32_t> group_of_stack(one_side ? profile.stacks.size() : 0, kNone);
  if (one_side) sides.push_back(SideKey{});
  groups.reserve(one_side ? std::min(profile.stacks.size(), profile.sample_sums.size())
                          : profile.sample_sums.size());
  SideKey last_side_key;
  uint32_t last_side = kNone;
  uint64_t total = 0, samples = 0;
  for (const symbolize::SampleSum& s : profile.sample_sums) {
    if (s.event != event || s.stack == kNone) continue;
    uint32_t index;
    if (one_side) {
      index = group_of_stack[s.stack];
      if (index == kNone) {
        index = group_of_stack[s.stack] = static_cast<uint32_t>(groups.size());
        groups.push_back(Group{s.stack, 0, 0, s.tid});
      }
    } else {
      SideKey k;
      if (uses.comm) k.comm = s.comm;
      if (uses.tid) k.tid = s.tid;
      if (uses.cpu) k.cpu = s.cpu;
      if (last_side == kNone || !(k == last_side_key)) {
        auto [it, inserted] = side_index.try_emplace(k, static_cast<uint32_t>(sides.size()));
        if (inserted) sides.push_back(k);
        last_side_key = k;
        last_side = it->second;
      }
      auto [it, inserted] = group_index.try_emplace(uint64_t{last_side} << 32 | s.stack,
                                                    static_cast<uint32_t>(groups.size()));
      if (inserted) groups.push_back(Group{s.stack, last_side, 0, s.tid});
      index = it->second;
    }
    groups[index].period += s.period;
    total += s.period;
    samples += s.samples;
  }
  group_index = {};

  // Rows: each group's leaf is its Self; in children mode every distinct
  // key of its stack gets its Children (once per stack, at the leaf-most
  // place). A row is (side, location part), the part being the row key
  // without the sample-side keys, interned once per location. The groups
  // are taken side by side (in file order within a side), so that within a
  // side a part's row is found in an array, stamped with the side's turn.
  // A resolved location's part is its function's when the key is sym
  // (and dso: the function's own), found in an array; the others are hashed.
  std::vector<uint32_t> part_of_location(profile.locations.size(), kNone);
  const bool by_function = uses.sym && !uses.srcline;
  std::vector<uint32_t> part_of_function(by_function ? profile.functions.size() : 0, kNone);
  absl::flat_hash_map<RowKey, uint32_t> part_index;
  std::vector<RowKey> part_keys;
  std::vector<uint32_t> part_location, part_row, part_turn;
  auto part_of = [&](uint32_t loc) {
    uint32_t& part = part_of_location[loc];
    if (part != kNone) return part;
    const Location& l = profile.locations[loc];
    const bool of_function = by_function && l.function != kNone &&
                             (!uses.dso || l.mapping == profile.functions[l.function].mapping);
    if (of_function && part_of_function[l.function] != kNone)
      return part = part_of_function[l.function];
    RowKey key = KeyOf(profile, uses, srclines, SideKey{}, loc);
    uint32_t found = static_cast<uint32_t>(part_keys.size());
    if (!of_function) found = part_index.try_emplace(key, found).first->second;
    if (found == part_keys.size()) {
      part_keys.push_back(key);
      part_location.push_back(loc);
      part_row.push_back(kNone);
      part_turn.push_back(kNone);
    }
    if (of_function) part_of_function[l.function] = found;
    return part = found;
  };
  std::vector<uint32_t> by_side(groups.size());
  {
    std::vector<uint32_t> starts(sides.size() + 1, 0);
    for (const Group& g : groups) ++starts[g.side + 1];
    for (size_t i = 1; i < starts.size(); ++i) starts[i] += starts[i - 1];
    for (uint32_t gi = 0; gi < groups.size(); ++gi) by_side[starts[groups[gi].side]++] = gi;
  }
  std::vector<Row> rows;
  uint32_t turn = kNone;
  auto row_of = [&](const Group& g, uint32_t loc) -> Row& {
    const uint32_t part = part_of(loc);
    if (part_turn[part] != turn) {
      part_turn[part] = turn;
      part_row[part] = static_cast<uint32_t>(rows.size());
      const SideKey& side = sides[g.side];
      Row r;
      r.key = part_keys[part];
      r.key.comm = side.comm;
      r.key.tid = side.tid;
      r.key.cpu = side.cpu;
      r.location = loc;
      r.part = part;
      r.side = g.side;
      r.comm = side.comm;
      r.tid = side.tid;
      r.cpu = side.cpu;
      rows.push_back(r);
    }
    return rows[part_row[part]];
  };
  for (size_t i = 0; i < by_side.size(); ++i) {
    const uint32_t gi = by_side[i];
    const Group& group = groups[gi];
    if (i == 0 || group.side != groups[by_side[i - 1]].side) ++turn;
    const uint32_t* begin = profile.stack_begin(group.stack);
    const uint32_t* end = profile.stack_end(group.stack);
    if (begin == end) continue;
    row_of(group, *begin).self += group.period;
    if (!children) continue;
    const uint32_t n = static_cast<uint32_t>(end - begin);
    for (const uint32_t* p = begin; p != end; ++p) {
      Row& row = row_of(group, *p);
      if (row.last_group == gi) continue;  // recursion: once per stack
      if (row.last_group == kNone) row.first_tid = group.first_tid;
      row.last_group = gi;
      row.children += group.period;
      // The chain drawn under the row (see the call graphs below).
      const uint32_t at = static_cast<uint32_t>(p - begin);
      const uint32_t depth = at == 0 ? n : caller_order ? at + 1 : n - at;
      row.max_depth = std::max(row.max_depth, depth);
    }
  }
  by_side = {};
  part_row = {};
  part_turn = {};

  auto weight = [&](const Row& r) { return children ? r.children : r.self; };
  // Only the rows printed are ordered (--percent-limit).
  std::vector<uint32_t> shown;
  shown.reserve(rows.size());
  for (uint32_t i = 0; i < rows.size(); ++i) {
    const double percent = total == 0 ? 0 : 100.0 * static_cast<double>(weight(rows[i])) / total;
    if (!(percent < options.percent_limit)) shown.push_back(i);
  }
  const std::vector<uint32_t> order =
      RowOrder(profile, options.sort, srclines, rows, shown, children, call_graph, caller_order);
  shown = {};

  // Call graphs: the (group, position) of each row to draw, a row lighter
  // than the threshold having no branch to draw. Found in a second walk of
  // the groups (in file order), where only the frames of a part drawn look
  // their row up.
  const uint64_t min_hit =
      static_cast<uint64_t>(static_cast<double>(total) * options.graph_threshold / 100.0);
  std::vector<std::vector<Contribution>> contributions;
  std::vector<uint32_t> drawn_index;  // per row: index into `contributions`, or kNone
  if (call_graph) {
    absl::flat_hash_map<uint64_t, uint32_t> drawn_row;  // (side, part) -> row
    std::vector<bool> part_drawn(part_keys.size(), false);
    drawn_index.assign(rows.size(), kNone);
    for (uint32_t i : order) {
      const Row& r = rows[i];
      if (weight(r) < min_hit) continue;
      drawn_index[i] = static_cast<uint32_t>(contributions.size());
      contributions.emplace_back();
      part_drawn[r.part] = true;
      drawn_row.emplace(uint64_t{r.side} << 32 | r.part, i);
    }
    std::vector<uint32_t> last_group(contributions.size(), kNone);
    for (uint32_t gi = 0; gi < groups.size() && !contributions.empty(); ++gi) {
      const Group& group = groups[gi];
      const uint32_t* begin = profile.stack_begin(group.stack);
      const uint32_t size = profile.stacks[group.stack].size;
      const uint32_t n = children ? size : std::min<uint32_t>(1, size);  // Self: the leaf
      for (uint32_t at = 0; at < n; ++at) {
        const uint32_t part = part_of_location[begin[at]];
        if (!part_drawn[part]) continue;
        auto it = drawn_row.find(uint64_t{group.side} << 32 | part);
        if (it == drawn_row.end()) continue;
        const uint32_t d = drawn_index[it->second];
        if (last_group[d] == gi) continue;  // recursion: the leaf-most place
        last_group[d] = gi;
        contributions[d].push_back({gi, at});
      }
    }
  }

  // Header, as perf prints it.
  const symbolize::Event& ev = profile.events[event];
  absl::StrAppend(out, "# Samples: ", SampleCount(samples), " of event '", ev.name, "'\n");
  absl::StrAppend(out, "# Event count (approx.): ", total, "\n#\n");
  std::vector<Column> columns;
  std::vector<size_t> widths;
  if (children) columns = {{"Children", true}, {"Self", true}};
  else columns = {{"Overhead", true}};
  for (size_t c = 0; c < columns.size(); ++c) widths.push_back(8);
  size_t comm_width = 0;
  if (uses.tid)
    for (const SideKey& side : sides)
      if (side.comm < profile.comms.size())
        comm_width = std::max(comm_width, profile.comms[side.comm].size());
  // A location key's cell is the same in every row of a part, a
  // sample-side key's in every row of a side: each is measured once.
  for (SortKey k : options.sort) {
    columns.push_back(ColumnOf(k));
    size_t w = columns.back().header.size();
    const bool of_side = k == SortKey::kComm || k == SortKey::kPid || k == SortKey::kCpu;
    Row r;
    for (size_t i = 0; i < (of_side ? sides.size() : part_keys.size()); ++i) {
      if (of_side) {
        r.comm = sides[i].comm;
        r.tid = sides[i].tid;
        r.cpu = sides[i].cpu;
      } else {
        r.key = part_keys[i];
        r.location = part_location[i];
      }
      w = std::max(w, CellWidth(profile, srclines, k, r, comm_width));
    }
    widths.push_back(w);
  }
  std::string header = "#", dots = "#";
  for (size_t c = 0; c < columns.size(); ++c) {
    absl::StrAppend(&header, c == 0 ? " " : "  ",
                    columns[c].right ? PadLeft(columns[c].header, widths[c])
                                     : PadRight(columns[c].header, widths[c]));
    absl::StrAppend(&dots, c == 0 ? " " : "  ", std::string(widths[c], '.'));
  }
  absl::StrAppend(out, header, "\n", dots, "\n#\n");

  const size_t value_columns = children ? 2 : 1;
  const bool skip_first = !options.sort.empty() && options.sort[0] == SortKey::kSym;
  struct PercentText {
    bool valid = false;
    uint64_t part = 0;
    std::string text;
  };
  // Room for the rows at their columns' widths (a row of an overlong cell or
  // a call graph grows the text further): a text of megabytes grown by
  // doubling copies itself and faults in twice its size.
  size_t row_width = 2;  // the leading space and the newline
  for (size_t c = 0; c < columns.size(); ++c) row_width += widths[c] + (c == 0 ? 1 : 2);
  // FrameClasses, when a graph is drawn.
  const std::vector<uint32_t> class_of =
      call_graph && !contributions.empty() ? FrameClasses(profile) : std::vector<uint32_t>();
  // The rows order[begin, end), appended to *text.
  // A row's cells read its Row, its location, its function and the name's
  // characters, each a cache miss in a table of tens of thousands of rows
  // (they come in weight order, not in memory order): each is asked for a
  // few rows ahead, one step of the chain further each time.
  auto prefetch_cells = [&](size_t at, size_t end) {
    if (at + 12 < end) __builtin_prefetch(&rows[order[at + 12]]);
    if (at + 8 < end) __builtin_prefetch(&profile.locations[rows[order[at + 8]].location]);
    if (at + 4 < end) {
      const uint32_t function = profile.locations[rows[order[at + 4]].location].function;
      if (function != kNone) __builtin_prefetch(&profile.functions[function]);
    }
    if (at + 2 < end) {
      const uint32_t function = profile.locations[rows[order[at + 2]].location].function;
      if (function != kNone) __builtin_prefetch(profile.functions[function].name.data());
    }
  };
  auto write_rows = [&](size_t begin, size_t end, std::string* text) {
    text->reserve(text->size() + (end - begin) * row_width);
    PercentText percent_text[2];  // the value columns' last
    for (size_t at = begin; at < end; ++at) {
      prefetch_cells(at, end);
      const uint32_t index = order[at];
      const Row& r = rows[index];
      // Written in place (one row per distinct key: a hundred thousand lines).
      text->push_back(' ');
      for (size_t c = 0; c < columns.size(); ++c) {
        text->append(c == 0 ? " " : "  ");
        if (c < value_columns) {  // "%.2f%%" right-aligned in the column
          const uint64_t part = children && c == 0 ? r.children : r.self;
          const double p = total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
          // Rows come heaviest first, so equal percents (the many rows of a
          // sample or two) are neighbours: each column formats a value once.
          PercentText& percent = percent_text[c];
          if (!percent.valid || percent.part != part) {
            percent = {true, part, absl::StrFormat("%*.2f%%", static_cast<int>(widths[c]) - 1, p)};
          }
          text->append(percent.text);
          continue;
        }
        const SortKey k = options.sort[c - value_columns];
        // A left-aligned last cell is not padded: its width is not needed
        // (measuring it reads the row's location and function a second time).
        const bool padded = columns[c].right || c + 1 != columns.size();
        const size_t w = padded ? CellWidth(profile, srclines, k, r, comm_width) : 0;
        const size_t pad = w < widths[c] ? widths[c] - w : 0;
        if (columns[c].right) text->append(pad, ' ');
        AppendCell(profile, srclines, k, r, comm_width, text);
        if (!columns[c].right && padded) text->append(pad, ' ');
      }
      text->push_back('\n');
      if (!call_graph || drawn_index[index] == kNone) continue;

      // The row's chains: in caller order root to leaf (for a Children row,
      // from the row's frame down to the leaf), in callee order leaf to root
      // (from the row's frame up).
      CallTree tree;
      for (const Contribution& c : contributions[drawn_index[index]]) {
        const Group& g = groups[c.group];
        const uint32_t* begin = profile.stack_begin(g.stack);
        const uint32_t n = profile.stacks[g.stack].size;
        if (caller_order) {
          const uint32_t from = c.position == 0 ? n - 1 : c.position;
          tree.Add(begin + from, from + 1, -1, class_of, g.period);
        } else {
          tree.Add(begin + c.position, n - c.position, 1, class_of, g.period);
        }
      }
      GraphPrinter(profile, tree, total, min_hit, text).Print(weight(r), skip_first);
    }
  };
  if (order.size() < kRowsForTwoThreads) {
    write_rows(0, order.size(), out);
  } else {
    // The second half of the rows on a thread, into a text of its own.
    std::string second_half;
    const size_t middle = order.size() / 2;
    std::thread second([&] { write_rows(middle, order.size(), &second_half); });
    write_rows(0, middle, out);
    second.join();
    out->append(second_half);
  }
  out->append("\n\n");
}

}  // namespace

absl::StatusOr<std::vector<SortKey>> ParseSortKeys(absl::string_view keys) {
  std::vector<SortKey> out;
  for (absl::string_view word : absl::StrSplit(keys, ',')) {
    SortKey k;
    if (word == "comm") k = SortKey::kComm;
    else if (word == "dso") k = SortKey::kDso;
    else if (word == "sym" || word == "symbol") k = SortKey::kSym;
    else if (word == "pid" || word == "tid") k = SortKey::kPid;
    else if (word == "cpu") k = SortKey::kCpu;
    else if (word == "srcline") k = SortKey::kSrcline;
    else
      return absl::InvalidArgumentError(
          absl::StrCat("unknown sort key '", word, "' (known: comm, dso, sym, pid, tid, cpu, srcline)"));
    if (std::find(out.begin(), out.end(), k) != out.end())
      return absl::InvalidArgumentError(absl::StrCat("sort key '", word, "' given twice"));
    out.push_back(k);
  }
  return out;
}

absl::Status ParseCallGraphOption(absl::string_view value, ReportOptions* options) {
  options->call_graph = true;
  for (absl::string_view word : absl::StrSplit(value, ',', absl::SkipEmpty())) {
    double threshold = 0;
    if (word == "none") options->call_graph = false;
    else if (word == "graph" || word == "fractal" || word == "flat" || word == "folded") continue;
    else if (word == "caller") options->caller_order = true;
    else if (word == "callee") options->caller_order = false;
    else if (word == "function" || word == "address" || word == "percent") continue;
    else if (absl::SimpleAtod(word, &threshold) && threshold >= 0 && threshold <= 100)
      options->graph_threshold = threshold;
    else
      return absl::InvalidArgumentError(absl::StrCat(
          "'", word, "' is not graph, none, caller, callee or a threshold percent"));
  }
  return absl::OkStatus();
}

bool HasCallChains(const Profile& profile) {
  for (const symbolize::Stack& s : profile.stacks)
    if (s.size > 1) return true;
  return false;
}

std::string RenderReportTable(const Profile& profile, const ReportOptions& options) {
  const bool chains = HasCallChains(profile);
  const bool children = options.children.value_or(chains);
  const bool call_graph = options.call_graph.value_or(chains);
  const bool caller_order = options.caller_order.value_or(children);
  std::string out =
      "# To display the perf.data header info, please use --header/--header-only options.\n#\n#\n";
  absl::StrAppend(&out, "# Total Lost Samples: ", profile.lost, "\n#\n");
  std::vector<bool> sampled(profile.events.size(), false);
  for (const symbolize::SampleSum& s : profile.sample_sums)
    if (s.event < sampled.size()) sampled[s.event] = true;
  for (uint32_t e = 0; e < profile.events.size(); ++e)
    if (sampled[e]) RenderEvent(profile, options, e, children, call_graph, caller_order, &out);
  return out;
}

}  // namespace perfring::report
