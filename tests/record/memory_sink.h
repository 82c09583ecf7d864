// A RecordSink for tests: keeps a copy of every record (and its event's name
// and format) so a test can decode and inspect the stream afterwards.
#ifndef PERFRING_TESTS_RECORD_MEMORY_SINK_H_
#define PERFRING_TESTS_RECORD_MEMORY_SINK_H_

#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "decode/decoder.h"
#include "decode/event_table.h"
#include "record/record_sink.h"

namespace perfring {

struct StoredRecord {
  std::vector<uint64_t> words;  // 8-aligned copy of the record
  uint32_t size = 0;
  std::string event;            // "" when the sink got no event
  EventFormat format;

  const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(words.data()); }
  uint32_t type() const { return reinterpret_cast<const perf_event_header*>(words.data())->type; }
  uint16_t misc() const { return reinterpret_cast<const perf_event_header*>(words.data())->misc; }
  // Decodes the copy (valid while this StoredRecord lives).
  absl::StatusOr<Record> Decode() const { return DecodeRecord(bytes(), size, format); }
};

// The record's body as T (its views point into `r`), or nullopt when it does
// not decode or is of another layout.
template <typename T>
std::optional<T> DecodedAs(const StoredRecord& r) {
  absl::StatusOr<Record> rec = r.Decode();
  if (!rec.ok() || rec->get<T>() == nullptr) return std::nullopt;
  return *rec->get<T>();
}

class MemorySink : public RecordSink {
 public:
  // Sleeping in EndRound makes a slow consumer (to provoke ring overflow).
  explicit MemorySink(std::chrono::milliseconds round_delay = std::chrono::milliseconds(0))
      : round_delay_(round_delay) {}

  absl::Status Begin(const EventTable& events) override {
    ++begins;
    for (size_t i = 0; i < events.size(); ++i) event_names.push_back(events.at(static_cast<int>(i)).name);
    return absl::OkStatus();
  }
  absl::Status Write(const RecordView& rec, const EventInfo* event) override {
    StoredRecord stored;
    stored.words.resize((rec.size + 7) / 8);
    std::memcpy(stored.words.data(), rec.bytes, rec.size);
    stored.size = rec.size;
    if (event != nullptr) {
      stored.event = event->name;
      stored.format = event->format;
    }
    records.push_back(std::move(stored));
    return absl::OkStatus();
  }
  absl::Status EndRound() override {
    ++rounds;
    if (round_delay_.count() > 0) std::this_thread::sleep_for(round_delay_);
    return absl::OkStatus();
  }
  absl::Status End(const CaptureSummary&) override {
    ++ends;
    return absl::OkStatus();
  }

  std::vector<StoredRecord> records;
  std::vector<std::string> event_names;
  int begins = 0, rounds = 0, ends = 0;

 private:
  std::chrono::milliseconds round_delay_;
};

// A MemorySink that takes the rings' records unmerged, as the perf.data sink
// does (RecordSink::TakesRingRecords): each record of the pieces is stored
// whole, with its event from the table Begin got, and the round it came in
// (the number of EndRound calls before it).
class RingRecordSink : public MemorySink {
 public:
  absl::Status Begin(const EventTable& events) override {
    events_ = &events;
    return MemorySink::Begin(events);
  }
  bool TakesRingRecords() const override { return true; }
  absl::Status WriteRingRecords(absl::Span<const absl::Span<const uint8_t>> pieces) override {
    ++ring_writes;
    bool first = true;
    std::string all;
    for (const absl::Span<const uint8_t>& piece : pieces)
      all.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    for (size_t pos = 0; pos < all.size();) {
      perf_event_header header;
      std::memcpy(&header, all.data() + pos, sizeof header);
      if (header.size < sizeof header || pos + header.size > all.size()) {
        return absl::InternalError("a ring piece holds a record cut short");
      }
      const RecordView rec = MakeRecordView(reinterpret_cast<const uint8_t*>(all.data() + pos), header.size);
      const EventInfo* event = events_->Resolve(rec.bytes, rec.size);
      if (first) ring_write_first_times.push_back({rounds, event ? event->layout.TimeOf(rec.bytes, rec.size) : 0});
      first = false;
      if (absl::Status s = Write(rec, event); !s.ok()) return s;
      ring_record_rounds.push_back(rounds);
      pos += header.size;
    }
    return absl::OkStatus();
  }

  int ring_writes = 0;
  // For each record that came through WriteRingRecords, in order: its round.
  std::vector<int> ring_record_rounds;
  // For each WriteRingRecords call, in order: its round and its first record's time.
  std::vector<std::pair<int, uint64_t>> ring_write_first_times;

 private:
  const EventTable* events_ = nullptr;
};

}  // namespace perfring

#endif  // PERFRING_TESTS_RECORD_MEMORY_SINK_H_
