// StopSignals: SIGINT/SIGTERM/SIGHUP stop the capture; with snapshot requests,
// SIGUSR2 wakes the session (its fd becomes readable) without stopping it,
// and each signal is one request. raise() delivers to this thread before it
// returns, so each step sees its signal's effect.
#include "record/stop_signals.h"

#include <poll.h>
#include <signal.h>

#include <gtest/gtest.h>

namespace perfring {
namespace {

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

TEST(StopSignalsTest, Usr2IsASnapshotRequestNotAStop) {
  absl::StatusOr<StopSignals> signals = StopSignals::Install(/*snapshot_requests=*/true);
  ASSERT_TRUE(signals.ok()) << signals.status();
  ASSERT_GE(signals->snapshot_fd(), 0);
  EXPECT_FALSE(Readable(signals->snapshot_fd()));
  EXPECT_EQ(signals->TakeSnapshotRequests(), 0u);

  raise(SIGUSR2);
  EXPECT_TRUE(Readable(signals->snapshot_fd()));
  EXPECT_FALSE(signals->stopped());
  EXPECT_EQ(signals->received(), 0);
  raise(SIGUSR2);
  EXPECT_EQ(signals->TakeSnapshotRequests(), 2u);  // both, once
  EXPECT_FALSE(Readable(signals->snapshot_fd()));
  EXPECT_EQ(signals->TakeSnapshotRequests(), 0u);

  raise(SIGTERM);
  EXPECT_TRUE(signals->stopped());
  EXPECT_EQ(signals->received(), SIGTERM);
  EXPECT_FALSE(Readable(signals->snapshot_fd()));  // a stop is not a snapshot request
}

// A closed terminal (SIGHUP) stops the capture as Ctrl-C does; the
// destructor gives SIGHUP its previous action back.
TEST(StopSignalsTest, HangupIsAStop) {
  struct sigaction before {};
  sigaction(SIGHUP, nullptr, &before);
  {
    absl::StatusOr<StopSignals> signals = StopSignals::Install();
    ASSERT_TRUE(signals.ok()) << signals.status();
    raise(SIGHUP);
    EXPECT_TRUE(signals->stopped());
    EXPECT_EQ(signals->received(), SIGHUP);
  }
  struct sigaction after {};
  sigaction(SIGHUP, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

TEST(StopSignalsTest, WithoutSnapshotRequestsUsr2IsLeftAlone) {
  struct sigaction before {};
  sigaction(SIGUSR2, nullptr, &before);
  {
    absl::StatusOr<StopSignals> signals = StopSignals::Install();
    ASSERT_TRUE(signals.ok()) << signals.status();
    EXPECT_EQ(signals->snapshot_fd(), -1);
    EXPECT_EQ(signals->TakeSnapshotRequests(), 0u);
    struct sigaction during {};
    sigaction(SIGUSR2, nullptr, &during);
    EXPECT_EQ(during.sa_handler, before.sa_handler);
  }
}

TEST(StopSignalsTest, DestructorRestoresUsr2) {
  struct sigaction before {};
  sigaction(SIGUSR2, nullptr, &before);
  {
    absl::StatusOr<StopSignals> signals = StopSignals::Install(/*snapshot_requests=*/true);
    ASSERT_TRUE(signals.ok());
    struct sigaction during {};
    sigaction(SIGUSR2, nullptr, &during);
    EXPECT_NE(during.sa_handler, before.sa_handler);
  }
  struct sigaction after {};
  sigaction(SIGUSR2, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

}  // namespace
}  // namespace perfring
