// SPDX-License-Identifier: Apache-2.0
#include "serve/slow_call_log.h"

#include <fmt/format.h>

#include <cstring>
#include <utility>

#include "common/errors.h"

namespace wp {

namespace {
constexpr Nanos kSecondNs = 1'000'000'000;

bool is_stdout(const std::string& path) {
  return path.empty() || path == "-";
}
}  // namespace

SlowCallLog::SlowCallLog(std::string path, Nanos threshold_ns, std::uint32_t per_second)
    : path_(std::move(path)), threshold_ns_(threshold_ns), per_second_(per_second) {
  out_ = open();
  if (out_->open_errno())
    throw Failure(kExitRuntime, fmt::format("cannot write the slow-call log {}: {}", path_,
                                            std::strerror(out_->open_errno())));
}

std::unique_ptr<OutputStream> SlowCallLog::open() const {
  if (is_stdout(path_)) return std::make_unique<OutputStream>();
  return std::make_unique<OutputStream>(path_, OutputStream::Mode::Append);
}

void SlowCallLog::offer(const Timeline& item, Nanos now_ns) {
  if (threshold_ns_ == 0 || latency_ns(call_of(item)) < threshold_ns_) return;
  if (now_ns - window_start_ >= kSecondNs) {
    window_start_ = now_ns;
    in_window_ = 0;
  }
  if (in_window_ >= per_second_) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ++in_window_;
  const std::string_view line = formatter_.timeline(item, JsonItemLine{.clock = clock_});
  out_->stream() << line << '\n';
  written_.fetch_add(1, std::memory_order_relaxed);
}

std::string SlowCallLog::reopen() {
  if (is_stdout(path_)) return "";
  out_->drain();
  auto fresh = open();
  if (fresh->open_errno()) return std::strerror(fresh->open_errno());
  out_ = std::move(fresh);
  return "";
}

bool SlowCallLog::flush() {
  return out_->drain();
}

}  // namespace wp
