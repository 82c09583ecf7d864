// Event names derived from an attr, for files that carry no names (no
// EVENT_DESC, no EVENT_UPDATE): perf's spelling for the generic events.
// Pure functions returning owned strings: thread-safe.
#ifndef PERFRING_PERFDATA_EVENT_NAMES_H_
#define PERFRING_PERFDATA_EVENT_NAMES_H_

#include <linux/perf_event.h>

#include <string>

namespace perfring::perfdata {

// "cpu-clock", "cycles", ...; "tracepoint:ID" for tracepoints and
// "TYPE:0xCONFIG" for other PMUs.
std::string EventNameFromAttr(const perf_event_attr& attr);

}  // namespace perfring::perfdata

#endif  // PERFRING_PERFDATA_EVENT_NAMES_H_
