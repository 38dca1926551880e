// SPDX-License-Identifier: Apache-2.0
// Block writes through an io_uring: up to `depth` in flight, each from a buffer slot of its
// own (registered with the ring when the kernel lets it pin them: IORING_OP_WRITE_FIXED),
// every completion checked, the latency of each from its submission to its completion.
#pragma once

#include <liburing.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "common/nanos.h"
#include "loadgen/measure.h"

namespace wp::loadgen {

class UringWriter {
 public:
  // Throws LoadError when the ring cannot be set up (io_uring disabled, say).
  UringWriter(int fd, std::size_t block_size, unsigned depth);
  ~UringWriter();
  UringWriter(const UringWriter&) = delete;
  UringWriter& operator=(const UringWriter&) = delete;

  // A free slot's buffer (page-aligned, block_size bytes) to fill before write(); waits for
  // a completion when every slot is in flight.
  char* next_buffer();
  // Submits the buffer next_buffer() returned as one write of block_size bytes at `offset`.
  void write(off_t offset);
  // Waits for every write in flight. A failed or short write throws LoadError (here or in
  // next_buffer(), whichever reaps it).
  void drain();

  unsigned in_flight() const { return in_flight_; }
  bool registered_buffers() const { return registered_; }
  // Submission to completion, one per completed write, in completion order.
  const std::vector<Nanos>& latencies() const { return latencies_; }

 private:
  struct Slot {
    off_t offset = 0;
    std::chrono::steady_clock::time_point submitted;
  };
  void reap();
  void reap_quietly() noexcept;

  int fd_;
  std::size_t block_size_;
  AlignedBuffer buffers_;  // outlives the ring: the kernel may read it until the ring is gone
  std::vector<Slot> slots_;
  std::vector<unsigned> free_;  // slot indices
  unsigned in_flight_ = 0;
  io_uring ring_{};
  bool registered_ = false;
  std::vector<Nanos> latencies_;
};

}  // namespace wp::loadgen
