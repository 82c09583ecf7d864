// perf.data images built byte by byte for the reader's and the dump's tests:
// a file-mode or pipe-mode image of given attrs, records and features, and a
// small two-event capture. Plain functions returning fresh strings;
// thread-safe.
#ifndef PERFRING_TESTS_PERFDATA_FILE_IMAGES_H_
#define PERFRING_TESTS_PERFDATA_FILE_IMAGES_H_

#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace perfring::perfdata::test_util {

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;

struct Attr {
  perf_event_attr attr{};
  std::vector<uint64_t> ids;
};

// A software event with the sample_type above and sample_id_all.
Attr MakeAttr(uint32_t config, std::vector<uint64_t> ids);

// SAMPLE: IDENTIFIER, IP, TID (10/11), TIME, PERIOD 1000.
std::string Sample(uint64_t id, uint64_t ip, uint64_t time);

// COMM with a TID|TIME|IDENTIFIER trailer.
std::string Comm(uint64_t id, const std::string& name, uint64_t time);

std::string FinishedRound();

// A file-mode image: header | ids | attrs (attr_size = attr.size + 16) |
// data | feature table | payloads.
std::string FileImage(const std::vector<Attr>& attrs, const std::string& data,
                      const std::vector<std::pair<int, std::string>>& features = {},
                      uint32_t attr_struct_size = sizeof(perf_event_attr));

// A pipe-mode image: pipe header, one HEADER_ATTR per attr, then `data`.
std::string PipeImage(const std::vector<Attr>& attrs, const std::string& data);

// COMM, three samples of the two events with a FINISHED_ROUND, in time order.
std::string TwoEventData();
// cpu-clock (id 1) and task-clock (id 2).
std::vector<Attr> TwoEvents();

}  // namespace perfring::perfdata::test_util

#endif  // PERFRING_TESTS_PERFDATA_FILE_IMAGES_H_
