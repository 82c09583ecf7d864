// The header object of `perfring dump --header`: a perf.data file's container
// fields ("mode", "header_size", section offsets), its events (name, attr
// fields, ids) and its features (hostname, os_release, cmdline, build ids,
// ...; the ones perfring does not interpret as "other": id, name, offset,
// size), as one JSON object.
//
// Every string from the file goes through LosslessUtf8 (json/lossless_text.h):
// nlohmann::json throws on one that is not UTF-8. Pure function of the
// reader's parsed header; reads nothing more from the file; thread-safe for a
// reader no one else is using.
#ifndef PERFRING_JSON_HEADER_JSON_H_
#define PERFRING_JSON_HEADER_JSON_H_

#include "nlohmann/json.hpp"

#include "perfdata/reader.h"

namespace perfring {

nlohmann::json HeaderJson(const perfdata::Reader& reader);

}  // namespace perfring

#endif  // PERFRING_JSON_HEADER_JSON_H_
