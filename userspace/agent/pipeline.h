// decode → stitch → sink, the one way data flows, shared by live tracing and `report`.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "decode/decoder.h"
#include "sinks/sink.h"
#include "stitch/stitcher.h"
#include "writepath.h"

namespace wp {

struct PipelineOptions {
  Nanos min_latency_ns = 0;
  std::function<void(const Timeline&)> observer;  // sees what the sink gets
};

class Pipeline {
 public:
  Pipeline(PipelineOptions options, const std::vector<DeviceInfo>& devices, Sink& sink);

  void on_record(std::span<const std::byte> record);
  // Records lost since the last call, per hook: the timelines pending now are marked.
  void add_lost(const LostCounts& delta);
  // Ends the stream: pending timelines and the summary go to the sink.
  void finish(Nanos duration_ns);
  const LostCounts& lost() const { return lost_; }

 private:
  void feed(const Event& event);
  void emit();

  PipelineOptions options_;
  Sink& sink_;
  Decoder decoder_;
  Stitcher stitcher_;
  std::vector<Timeline> finished_;
  LostCounts lost_{};
  Nanos last_ts_ = 0;
  SyncPhaseSummary sync_phases_;
  DirectIoSummary direct_io_;
};

}  // namespace wp
