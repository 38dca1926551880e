// SPDX-License-Identifier: Apache-2.0
// The trace's output: stdout or -o FILE, behind a std::ostream the sinks write to. Unlike
// std::ofstream it remembers why a write failed (ENOSPC, EPIPE, EIO), so the agent can stop
// the trace with that reason, and it writes only when its buffer fills or the agent drains it:
// a sink's per-item flush costs no system call.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.h"

namespace wp {

class OutputStream {
 public:
  static constexpr std::size_t kBufferBytes = 1u << 20;

  // Standard output, named `name` in error messages.
  OutputStream() : buffer_(STDOUT_FILENO), stream_(&buffer_), name_("standard output") {}
  enum class Mode { Truncate, Append };
  // Creates or truncates `path` (Append: adds to its end, as a log that is rotated by renaming
  // it does); check open_error() afterwards.
  explicit OutputStream(const std::string& path, Mode mode = Mode::Truncate)
      : buffer_(::open(path.c_str(),
                       O_WRONLY | O_CREAT | O_CLOEXEC | (mode == Mode::Append ? O_APPEND : O_TRUNC),
                       0644)),
        stream_(&buffer_),
        name_(path) {
    if (buffer_.fd() < 0) open_errno_ = errno;
    owns_fd_ = buffer_.fd() >= 0;
  }
  ~OutputStream() {
    drain();
    if (owns_fd_) ::close(buffer_.fd());
  }
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;

  std::ostream& stream() { return stream_; }
  const std::string& name() const { return name_; }
  int open_errno() const { return open_errno_; }
  // Writes out what is buffered; returns false once any write has failed.
  bool drain() { return buffer_.write_out() && stream_.good(); }
  // drain(), a failure thrown with its line: what ends a trace or report whose output failed.
  void drain_or_throw() {
    if (!drain()) throw Failure(kExitRuntime, write_failed(name(), error()));
  }
  // Why the output failed ("" while it has not).
  std::string error() const {
    if (buffer_.error()) return std::strerror(buffer_.error());
    return stream_.good() ? "" : "output stream error";
  }

 private:
  class FdBuffer : public std::streambuf {
   public:
    explicit FdBuffer(int fd) : fd_(fd), space_(kBufferBytes) {
      setp(space_.data(), space_.data() + space_.size());
    }
    int fd() const { return fd_; }
    int error() const { return error_; }

    // Everything buffered to the fd; false (and error() set) if a write failed.
    bool write_out() {
      const char* at = pbase();
      std::size_t left = static_cast<std::size_t>(pptr() - pbase());
      while (left > 0 && error_ == 0 && fd_ >= 0) {
        const ssize_t n = ::write(fd_, at, left);
        if (n < 0) {
          if (errno != EINTR) error_ = errno;
          continue;
        }
        if (n == 0) error_ = EIO;
        at += n;
        left -= static_cast<std::size_t>(n);
      }
      // After a failure the rest is dropped: the trace is ending with that error.
      setp(space_.data(), space_.data() + space_.size());
      return error_ == 0 && fd_ >= 0;
    }

   protected:
    int_type overflow(int_type ch) override {
      if (!write_out()) return traits_type::eof();
      if (!traits_type::eq_int_type(ch, traits_type::eof())) {
        *pptr() = traits_type::to_char_type(ch);
        pbump(1);
      }
      return traits_type::not_eof(ch);
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
      std::streamsize done = 0;
      while (done < n) {
        std::streamsize room = epptr() - pptr();
        if (room == 0) {
          if (!write_out()) return done;
          continue;
        }
        const std::streamsize chunk = std::min(room, n - done);
        std::memcpy(pptr(), s + done, static_cast<std::size_t>(chunk));
        pbump(static_cast<int>(chunk));
        done += chunk;
      }
      return done;
    }
    // A sink's flush: deferred to the agent's drain(), so a failure is still seen there.
    int sync() override { return error_ == 0 ? 0 : -1; }

   private:
    int fd_;
    int error_ = 0;
    std::vector<char> space_;
  };

  FdBuffer buffer_;
  std::ostream stream_;
  std::string name_;
  int open_errno_ = 0;
  bool owns_fd_ = false;
};

// Standard output (`path` empty) or `path`, opened before anything is traced or read: a bad
// path fails at once, with its line.
inline std::unique_ptr<OutputStream> open_output(const std::string& path) {
  auto output =
      path.empty() ? std::make_unique<OutputStream>() : std::make_unique<OutputStream>(path);
  if (output->open_errno())
    throw Failure(kExitRuntime, cannot_write(path, std::strerror(output->open_errno())));
  return output;
}

}  // namespace wp
