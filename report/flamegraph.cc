#include "report/flamegraph.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/folded.h"
#include "report/frame_name.h"
#include "report/stack_counts.h"

namespace perfring::report {
namespace {

using symbolize::kNone;
using symbolize::Profile;

constexpr double kFrameHeight = 16;
constexpr double kFontSize = 12;
constexpr double kCharWidth = 0.59 * kFontSize;  // Verdana's average, as flamegraph.pl estimates
constexpr double kPad = 10;
constexpr double kTop = 64;     // title, legend, buttons
constexpr double kBottom = 36;  // details line, match share
constexpr double kMinWidth = 0.1;

enum class Kind { kComm, kUser, kKernel, kUnresolved };

struct Node {
  uint32_t name = 0;  // into names
  Kind kind = Kind::kUser;
  uint32_t mapping = kNone;
  uint64_t count = 0;
  std::vector<uint32_t> children;
};

std::string Escape(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t') out += '?';
        else out += c;
    }
  }
  return out;
}

// The label that fits `width` px: the name, cut with ".." when it does not
// fit, nothing when not even 3 characters fit (the same rule as the script).
std::string Fit(absl::string_view name, double width) {
  size_t chars = static_cast<size_t>(width / kCharWidth);
  if (chars < 3) return "";
  if (name.size() <= chars) return std::string(name);
  return absl::StrCat(name.substr(0, chars - 2), "..");
}

std::string Hsl(double hue, double saturation, double lightness) {
  return absl::StrFormat("hsl(%.0f,%.0f%%,%.0f%%)", hue, saturation, lightness);
}

// A variation in [0, 1) from the frame's name, so neighbours differ; the
// same in every run (FNV-1a: absl's hash is seeded per process, which gave
// the same file different colours each time).
double Vary(absl::string_view name) {
  uint64_t h = 0xcbf29ce484222325u;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3u;
  return static_cast<double>(h % 1000) / 1000.0;
}

// Hues for user DSOs, the busiest first; orange (kernel) is left out.
constexpr double kDsoHues[] = {0, 55, 100, 175, 210, 265, 300, 335, 140, 80};

constexpr char kScript[] = R"JS(
var W = %WIDTH%, PAD = %PAD%, CHAR = %CHAR%;
var frames = [], details, matched, zoomed = null;
function init() {
  details = document.getElementById("details");
  matched = document.getElementById("matched");
  var gs = document.getElementsByClassName("f");
  for (var i = 0; i < gs.length; i++) {
    var g = gs[i], r = g.getElementsByTagName("rect")[0], t = g.getElementsByTagName("text")[0];
    var f = {g: g, r: r, t: t, x: +r.getAttribute("x"), w: +r.getAttribute("width"),
             y: +r.getAttribute("y"), name: g.getAttribute("data-n"), fill: r.getAttribute("fill"),
             title: g.getElementsByTagName("title")[0].textContent};
    frames.push(f);
    g.onclick = (function (f) { return function () { zoom(f); }; })(f);
    g.onmouseover = (function (f) { return function () { details.textContent = f.title; }; })(f);
    g.onmouseout = function () { details.textContent = " "; };
  }
  document.getElementById("reset").onclick = function () { zoom(null); };
  document.getElementById("search").onclick = search;
}
function fit(name, w) {
  var n = Math.floor(w / CHAR);
  if (n < 3) return "";
  return name.length <= n ? name : name.substring(0, n - 2) + "..";
}
function place(f, x, w, faded, shown) {
  f.g.style.display = shown ? "" : "none";
  if (!shown) return;
  f.r.setAttribute("x", x);
  f.r.setAttribute("width", w);
  f.t.setAttribute("x", x + 3);
  f.t.textContent = fit(f.name, w - 3);
  f.g.style.opacity = faded ? 0.5 : 1;
}
function zoom(z) {
  zoomed = z;
  document.getElementById("reset").style.opacity = z ? 1 : 0.3;
  var eps = 1e-6;
  for (var i = 0; i < frames.length; i++) {
    var f = frames[i];
    if (!z) { place(f, f.x, f.w, false, true); continue; }
    var scale = (W - 2 * PAD) / z.w;
    if (f.y <= z.y && f.x >= z.x - eps && f.x + f.w <= z.x + z.w + eps)
      place(f, PAD + (f.x - z.x) * scale, f.w * scale, false, f.w * scale >= 0.1);
    else if (f.y > z.y && f.x <= z.x + eps && f.x + f.w >= z.x + z.w - eps)
      place(f, PAD, W - 2 * PAD, true, true);
    else
      place(f, 0, 0, false, false);
  }
}
function search() {
  var term = prompt("Search for (regular expression; empty to clear):", "");
  if (term === null) return;
  var re = null;
  if (term !== "") {
    try { re = new RegExp(term); } catch (e) { alert("Bad regular expression: " + e.message); return; }
  }
  var spans = [];
  for (var i = 0; i < frames.length; i++) {
    var f = frames[i], hit = re !== null && re.test(f.name);
    f.r.setAttribute("fill", hit ? "rgb(230,0,230)" : f.fill);
    if (hit) spans.push([f.x, f.x + f.w]);
  }
  spans.sort(function (a, b) { return a[0] - b[0]; });
  var total = 0, end = -1;
  for (var j = 0; j < spans.length; j++) {
    var s = Math.max(spans[j][0], end);
    if (spans[j][1] > s) { total += spans[j][1] - s; end = spans[j][1]; }
  }
  matched.textContent = re === null ? " " :
      "Matched: " + (100 * total / (W - 2 * PAD)).toFixed(2) + "%";
}
)JS";

std::string Script(int width) {
  std::string s = kScript;
  auto replace = [&](const std::string& key, const std::string& value) {
    size_t at = s.find(key);
    if (at != std::string::npos) s.replace(at, key.size(), value);
  };
  replace("%WIDTH%", absl::StrCat(width));
  replace("%PAD%", absl::StrCat(kPad));
  replace("%CHAR%", absl::StrFormat("%.3f", kCharWidth));
  return s;
}

}  // namespace

std::string FlameGraphSvg(const Profile& profile, uint32_t event, const FlameGraphOptions& options) {
  // The frame tree: the command, then the frames from the root to the leaf,
  // same-named siblings merged (as flamegraph.pl merges folded stacks).
  std::vector<std::string> names;
  absl::flat_hash_map<std::string, uint32_t> name_index;
  auto intern = [&](std::string s) {
    auto [it, inserted] = name_index.try_emplace(s, static_cast<uint32_t>(names.size()));
    if (inserted) names.push_back(std::move(s));
    return it->second;
  };
  std::vector<uint32_t> location_name(profile.locations.size(), kNone);
  std::vector<Node> nodes(1);  // nodes[0]: all samples
  nodes[0].name = intern("all");
  nodes[0].kind = Kind::kComm;
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint32_t> child_index;
  auto child = [&](uint32_t parent, uint32_t name, Kind kind, uint32_t mapping) {
    auto [it, inserted] =
        child_index.try_emplace(std::make_pair(parent, name), static_cast<uint32_t>(nodes.size()));
    if (inserted) {
      Node n;
      n.name = name;
      n.kind = kind;
      n.mapping = mapping;
      nodes.push_back(std::move(n));
      nodes[parent].children.push_back(it->second);
    }
    return it->second;
  };
  std::vector<uint64_t> dso_samples(profile.mappings.size(), 0);
  for (const StackCount& c : CountStacks(profile, event)) {
    nodes[0].count += c.samples;
    std::string comm = c.comm != kNone && c.comm < profile.comms.size() ? profile.comms[c.comm]
                                                                        : std::string("[unknown]");
    uint32_t at = child(0, intern(comm), Kind::kComm, kNone);
    nodes[at].count += c.samples;
    for (const uint32_t* p = profile.stack_end(c.stack); p != profile.stack_begin(c.stack);) {
      uint32_t l = *--p;
      if (location_name[l] == kNone) location_name[l] = intern(FoldedFrameName(profile, l));
      const symbolize::Location& loc = profile.locations[l];
      FrameKind k = KindOf(profile, loc);
      Kind kind = k == FrameKind::kKernel ? Kind::kKernel
                  : k == FrameKind::kUser ? Kind::kUser
                                          : Kind::kUnresolved;
      at = child(at, location_name[l], kind, loc.mapping);
      nodes[at].count += c.samples;
      if (kind == Kind::kUser && loc.mapping < dso_samples.size() && p == profile.stack_begin(c.stack))
        dso_samples[loc.mapping] += c.samples;
    }
  }

  // Hues for the user DSOs, the busiest first.
  std::vector<uint32_t> dso_order;
  for (uint32_t m = 0; m < dso_samples.size(); ++m)
    if (!profile.mappings[m].kernel) dso_order.push_back(m);
  std::stable_sort(dso_order.begin(), dso_order.end(),
                   [&](uint32_t a, uint32_t b) { return dso_samples[a] > dso_samples[b]; });
  std::vector<double> dso_hue(profile.mappings.size(), 20);
  for (size_t i = 0; i < dso_order.size(); ++i)
    dso_hue[dso_order[i]] = kDsoHues[i % (sizeof kDsoHues / sizeof kDsoHues[0])];
  auto color = [&](const Node& n) {
    double v = Vary(names[n.name]);
    switch (n.kind) {
      case Kind::kComm: return Hsl(210, 20, 62 + 10 * v);
      case Kind::kKernel: return Hsl(28 + 12 * v, 90, 55 + 10 * v);
      case Kind::kUnresolved: return Hsl(0, 0, 68 + 12 * v);
      case Kind::kUser:
        return Hsl(n.mapping < dso_hue.size() ? dso_hue[n.mapping] + 10 * v : 0, 65, 52 + 14 * v);
    }
    return std::string("grey");
  };

  // Depth of the tallest stack that is drawn.
  const uint64_t total = nodes[0].count;
  const double inner = options.width - 2 * kPad;
  const double per_sample = total == 0 ? 0 : inner / static_cast<double>(total);
  size_t max_depth = 0;
  {
    std::vector<std::pair<uint32_t, size_t>> todo = {{0, 0}};
    while (!todo.empty()) {
      auto [n, d] = todo.back();
      todo.pop_back();
      if (nodes[n].count * per_sample < kMinWidth) continue;
      max_depth = std::max(max_depth, d);
      for (uint32_t c : nodes[n].children) todo.push_back({c, d + 1});
    }
  }
  const double height = kTop + (max_depth + 1) * kFrameHeight + kBottom;

  std::string svg;
  absl::StrAppend(&svg, "<?xml version=\"1.0\" standalone=\"no\"?>\n",
                  absl::StrFormat("<svg version=\"1.1\" width=\"%d\" height=\"%.0f\" "
                                  "viewBox=\"0 0 %d %.0f\" onload=\"init()\" "
                                  "xmlns=\"http://www.w3.org/2000/svg\">\n",
                                  options.width, height, options.width, height));
  absl::StrAppend(&svg, "<style type=\"text/css\">text { font-family: Verdana, sans-serif; font-size: ",
                  kFontSize, "px; fill: rgb(0,0,0); } .f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; } "
                  ".button { cursor: pointer; } .button:hover { text-decoration: underline; }</style>\n");
  absl::StrAppend(&svg, "<script type=\"text/ecmascript\"><![CDATA[", Script(options.width),
                  "]]></script>\n");
  absl::StrAppend(&svg, "<rect x=\"0\" y=\"0\" width=\"", options.width, "\" height=\"",
                  absl::StrFormat("%.0f", height), "\" fill=\"rgb(248,248,244)\"/>\n");
  absl::StrAppend(&svg,
                  absl::StrFormat("<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" "
                                  "style=\"font-size:17px\">%s</text>\n",
                                  options.width / 2.0, Escape(options.title)));
  absl::StrAppend(&svg,
                  absl::StrFormat("<text id=\"reset\" class=\"button\" x=\"%.0f\" y=\"24\" "
                                  "style=\"opacity:0.3\">Reset Zoom</text>\n", kPad));
  absl::StrAppend(&svg,
                  absl::StrFormat("<text id=\"search\" class=\"button\" x=\"%.0f\" y=\"24\" "
                                  "text-anchor=\"end\">Search</text>\n", options.width - kPad));

  // The legend: the kinds, then the busiest user DSOs with their hues.
  std::vector<std::pair<std::string, std::string>> legend = {
      {"kernel", Hsl(34, 90, 60)}, {"unresolved", Hsl(0, 0, 74)}, {"command", Hsl(210, 20, 67)}};
  for (size_t i = 0; i < dso_order.size() && i < 6; ++i)
    if (dso_samples[dso_order[i]] > 0)
      legend.emplace_back(std::string(DsoShortName(profile, dso_order[i])),
                          Hsl(dso_hue[dso_order[i]] + 5, 65, 59));
  double lx = kPad;
  for (const auto& [label, fill] : legend) {
    absl::StrAppend(&svg,
                    absl::StrFormat("<rect x=\"%.1f\" y=\"36\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                                    "<text x=\"%.1f\" y=\"46\">%s</text>\n",
                                    lx, fill, lx + 16, Escape(label)));
    lx += 16 + kCharWidth * label.size() + 14;
  }

  // The frames, depth first, siblings by name.
  struct Todo {
    uint32_t node;
    size_t depth;
    double x;
  };
  std::vector<Todo> todo = {{0, 0, kPad}};
  while (!todo.empty()) {
    Todo t = todo.back();
    todo.pop_back();
    const Node& n = nodes[t.node];
    double w = n.count * per_sample;
    if (w < kMinWidth) continue;
    double y = height - kBottom - (t.depth + 1) * kFrameHeight;
    const std::string& name = names[n.name];
    std::string title = t.node == 0 ? absl::StrFormat("all (%d samples, 100%%)", n.count)
                                    : absl::StrFormat("%s (%d samples, %.2f%%)", name, n.count,
                                                      100.0 * n.count / total);
    absl::StrAppend(&svg, "<g class=\"f\" data-n=\"", Escape(name), "\"><title>", Escape(title),
                    "</title>",
                    absl::StrFormat("<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                                    "fill=\"%s\" rx=\"2\" ry=\"2\"/>",
                                    t.x, y, w, kFrameHeight - 1, color(n)),
                    absl::StrFormat("<text x=\"%.2f\" y=\"%.1f\">", t.x + 3, y + 11.5),
                    Escape(Fit(name, w - 3)), "</text></g>\n");
    std::vector<uint32_t> kids = n.children;
    std::sort(kids.begin(), kids.end(),
              [&](uint32_t a, uint32_t b) { return names[nodes[a].name] < names[nodes[b].name]; });
    double x = t.x;
    std::vector<Todo> next;
    for (uint32_t k : kids) {
      next.push_back({k, t.depth + 1, x});
      x += nodes[k].count * per_sample;
    }
    for (auto it = next.rbegin(); it != next.rend(); ++it) todo.push_back(*it);
  }
  absl::StrAppend(&svg,
                  absl::StrFormat("<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n", kPad,
                                  height - 12),
                  absl::StrFormat("<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"> "
                                  "</text>\n",
                                  options.width - kPad, height - 12),
                  "</svg>\n");
  return svg;
}

}  // namespace perfring::report
