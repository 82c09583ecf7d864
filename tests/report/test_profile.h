// Builds symbolize::Profile values by hand for report/'s tests: events,
// comms, mappings, functions and locations by name, samples by their stack
// (leaf first), stacks interned as the symbolizer interns them, the sums
// derived from the samples (as BuildProfile with a timeline gives both).
#ifndef PERFRING_TESTS_REPORT_TEST_PROFILE_H_
#define PERFRING_TESTS_REPORT_TEST_PROFILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "symbolize/profile.h"
#include "symbolize/sample_sums.h"

namespace perfring::report::testing {

class TestProfile {
 public:
  uint32_t Event(const std::string& name) {
    p_.events.push_back({name, 0, 0});
    return static_cast<uint32_t>(p_.events.size() - 1);
  }
  uint32_t Comm(const std::string& name) {
    p_.comms.push_back(name);
    return static_cast<uint32_t>(p_.comms.size() - 1);
  }
  uint32_t Mapping(const std::string& dso, bool kernel = false, uint64_t start = 0x400000,
                   uint64_t limit = 0x500000, const std::string& build_id = "") {
    symbolize::Mapping m;
    m.dso = dso;
    m.kernel = kernel;
    m.start = start;
    m.limit = limit;
    m.build_id = build_id;
    p_.mappings.push_back(m);
    return static_cast<uint32_t>(p_.mappings.size() - 1);
  }
  // A function and one location in it (address, dso offset address - start).
  uint32_t Frame(const std::string& function, uint32_t mapping, uint64_t address) {
    uint32_t f = symbolize::kNone;
    auto it = functions_.find({function, mapping});
    if (it != functions_.end()) {
      f = it->second;
    } else {
      p_.functions.push_back({function, function, "", mapping});
      f = static_cast<uint32_t>(p_.functions.size() - 1);
      functions_[{function, mapping}] = f;
    }
    return Location(f, mapping, address);
  }
  // An address no symbol covers (mapping may be kNone).
  uint32_t Unresolved(uint32_t mapping, uint64_t address, bool kernel = false) {
    uint32_t l = Location(symbolize::kNone, mapping, address);
    p_.locations[l].kernel = kernel;
    return l;
  }
  void Sample(uint32_t event, uint32_t comm, int32_t tid, const std::vector<uint32_t>& leaf_first,
              uint64_t period = 1, uint64_t time = 0, int32_t cpu = 0) {
    auto [it, inserted] = stacks_.try_emplace(leaf_first, static_cast<uint32_t>(p_.stacks.size()));
    if (inserted) {
      p_.stacks.push_back({static_cast<uint32_t>(p_.stack_locations.size()),
                           static_cast<uint32_t>(leaf_first.size())});
      p_.stack_locations.insert(p_.stack_locations.end(), leaf_first.begin(), leaf_first.end());
    }
    symbolize::Sample s;
    s.event = event;
    s.comm = comm;
    s.pid = tid;
    s.tid = tid;
    s.cpu = cpu;
    s.time = time ? time : 1000 + p_.samples.size();
    s.period = period;
    s.stack = it->second;
    s.record = p_.samples.size();  // file order: the order given
    p_.samples.push_back(s);
    p_.events[event].samples += 1;
    p_.events[event].period += period;
  }
  // The profile, its sums (Profile::sample_sums ...) derived from the
  // samples as they are now (as BuildProfile with a timeline gives both):
  // call it again after adding samples.
  symbolize::Profile& profile() {
    symbolize::SumSamples(&p_);
    return p_;
  }

 private:
  uint32_t Location(uint32_t function, uint32_t mapping, uint64_t address) {
    symbolize::Location l;
    l.address = address;
    l.mapping = mapping;
    l.function = function;
    if (mapping != symbolize::kNone) {
      l.dso_offset = address - p_.mappings[mapping].start;
      l.kernel = p_.mappings[mapping].kernel;
    }
    p_.locations.push_back(l);
    return static_cast<uint32_t>(p_.locations.size() - 1);
  }

  symbolize::Profile p_;
  std::map<std::pair<std::string, uint32_t>, uint32_t> functions_;
  std::map<std::vector<uint32_t>, uint32_t> stacks_;
};

}  // namespace perfring::report::testing

#endif  // PERFRING_TESTS_REPORT_TEST_PROFILE_H_
