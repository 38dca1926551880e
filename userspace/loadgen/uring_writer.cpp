// SPDX-License-Identifier: Apache-2.0
#include "loadgen/uring_writer.h"

#include <fmt/format.h>
#include <sys/uio.h>

#include <cstring>

#include "loadgen/context.h"

namespace wp::loadgen {

UringWriter::UringWriter(int fd, std::size_t block_size, unsigned depth)
    : fd_(fd), block_size_(block_size), buffers_(block_size * depth), slots_(depth) {
  if (const int rc = io_uring_queue_init(depth, &ring_, 0); rc < 0)
    throw LoadError(fmt::format("io_uring_queue_init (depth {}): {}", depth, std::strerror(-rc)));
  std::vector<iovec> iovecs(depth);
  for (unsigned i = 0; i < depth; ++i) {
    iovecs[i] = {buffers_.data() + i * block_size, block_size};
    free_.push_back(depth - 1 - i);  // slot 0 first
  }
  // Pinning counts against RLIMIT_MEMLOCK without CAP_IPC_LOCK: a refusal leaves plain
  // IORING_OP_WRITE from the same buffers, and the figures say which was used.
  registered_ = io_uring_register_buffers(&ring_, iovecs.data(), depth) == 0;
}

UringWriter::~UringWriter() {
  reap_quietly();
  io_uring_queue_exit(&ring_);
}

char* UringWriter::next_buffer() {
  while (free_.empty()) reap();
  return buffers_.data() + free_.back() * block_size_;
}

void UringWriter::write(off_t offset) {
  while (free_.empty()) reap();
  const unsigned slot = free_.back();
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  // The ring has as many entries as slots and each write is submitted at once: never full.
  if (!sqe) throw LoadError("io_uring: no free submission entry");
  char* buffer = buffers_.data() + slot * block_size_;
  const auto length = static_cast<unsigned>(block_size_);
  if (registered_)
    io_uring_prep_write_fixed(sqe, fd_, buffer, length, static_cast<std::uint64_t>(offset),
                              static_cast<int>(slot));
  else
    io_uring_prep_write(sqe, fd_, buffer, length, static_cast<std::uint64_t>(offset));
  io_uring_sqe_set_data64(sqe, slot);
  free_.pop_back();
  slots_[slot] = {offset, std::chrono::steady_clock::now()};
  ++in_flight_;
  const int rc = io_uring_submit(&ring_);
  if (rc != 1)
    throw LoadError(fmt::format("io_uring_submit of the write at offset {}: {}", offset,
                                rc < 0 ? std::strerror(-rc) : "not submitted"));
}

void UringWriter::drain() {
  while (in_flight_ > 0) reap();
}

// Waits for a completion, then takes every one there is and checks each.
void UringWriter::reap() {
  io_uring_cqe* cqe = nullptr;
  if (const int rc = io_uring_wait_cqe(&ring_, &cqe); rc < 0)
    throw LoadError(fmt::format("io_uring_wait_cqe: {}", std::strerror(-rc)));
  const auto now = std::chrono::steady_clock::now();
  while (io_uring_peek_cqe(&ring_, &cqe) == 0) {
    const auto slot = static_cast<unsigned>(io_uring_cqe_get_data64(cqe));
    const int res = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    --in_flight_;
    free_.push_back(slot);
    const Slot& done = slots_[slot];
    if (res < 0)
      throw LoadError(fmt::format("io_uring write of {} B at offset {}: {}", block_size_,
                                  done.offset, std::strerror(-res)));
    if (static_cast<std::size_t>(res) != block_size_)
      throw LoadError(fmt::format("io_uring write at offset {}: short write, {} of {} B",
                                  done.offset, res, block_size_));
    latencies_.push_back(static_cast<Nanos>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - done.submitted).count()));
  }
}

// On the way out (an error or an interrupt): the writes in flight still read their buffers.
void UringWriter::reap_quietly() noexcept {
  while (in_flight_ > 0) {
    io_uring_cqe* cqe = nullptr;
    if (io_uring_wait_cqe(&ring_, &cqe) < 0) return;  // queue_exit cancels what is left
    io_uring_cqe_seen(&ring_, cqe);
    --in_flight_;
  }
}

}  // namespace wp::loadgen
