// Status propagation for the perfdata package (internal): macros only, no
// state.
#ifndef PERFRING_PERFDATA_STATUS_MACROS_H_
#define PERFRING_PERFDATA_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"

// Returns the status of `expr` from the calling function when it is not OK.
#define PERFDATA_RETURN_IF_ERROR(expr)        \
  do {                                        \
    if (absl::Status s_ = (expr); !s_.ok()) { \
      return s_;                              \
    }                                         \
  } while (0)

// Assigns the value of the StatusOr `expr` to `lhs`, or returns its status
// from the calling function when it is not OK.
#define PERFDATA_ASSIGN_OR_RETURN(lhs, expr) \
  do {                                       \
    auto v_ = (expr);                        \
    if (!v_.ok()) return v_.status();        \
    lhs = *std::move(v_);                    \
  } while (0)

#endif  // PERFRING_PERFDATA_STATUS_MACROS_H_
