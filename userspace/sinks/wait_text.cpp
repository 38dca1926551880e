// SPDX-License-Identifier: Apache-2.0
#include "sinks/wait_text.h"

#include <fmt/format.h>

#include <variant>

#include "sinks/text_sink.h"

namespace wp {

bool has_named_waits(const Timeline& item) {
  return std::visit([](const auto& t) { return t.causes && !t.causes->waits.empty(); }, item);
}

const char* sleep_flag_name(SleepFlag flag) {
  switch (flag) {
    case SleepFlag::None: return "none";
    case SleepFlag::DirtyThrottle: return "dirty-throttle";
    case SleepFlag::WritebackWait: return "writeback-wait";
  }
  return "none";
}

std::vector<std::string> frame_names(const KernelStack& stack) {
  std::vector<std::string> names;
  names.reserve(stack.addrs.size());
  for (std::size_t i = 0; i < stack.addrs.size(); ++i) {
    if (i < stack.frames.size() && !stack.frames[i].empty())
      names.push_back(stack.frames[i]);
    else
      names.push_back(fmt::format("{:#x}", stack.addrs[i]));
  }
  // Names without addresses (a trace file that kept only the names) are frames too.
  for (std::size_t i = stack.addrs.size(); i < stack.frames.size(); ++i)
    names.push_back(stack.frames[i]);
  return names;
}

std::string short_frame(std::string_view frame) {
  const std::size_t offset = frame.find("+0x");
  if (offset == std::string_view::npos) return std::string(frame);
  std::string out(frame.substr(0, offset));
  // The module, if any, follows the offset: " [jbd2]".
  if (const std::size_t module = frame.find(" [", offset); module != std::string_view::npos)
    out += frame.substr(module);
  return out;
}

std::string frames_line(const std::vector<std::string>& frames, std::size_t max_frames) {
  if (frames.empty()) return "";
  std::string line = "at ";
  for (std::size_t i = 0; i < frames.size() && i < max_frames; ++i) {
    if (i != 0) line += " < ";
    line += printable_comm(short_frame(frames[i]));
  }
  if (frames.size() > max_frames) line += " < …";
  return line;
}

const char* wake_context_name(WakeContext c) {
  switch (c) {
    case WakeContext::Task: return "task";
    case WakeContext::Interrupt: return "interrupt";
    case WakeContext::Timer: return "timer";
  }
  return "";
}

std::string waker_text(const Waker& waker) {
  const std::string who =
      waker.kernel_thread
          ? fmt::format("{} (pid {}, kernel thread)", printable_comm(waker.comm), waker.pid)
          : fmt::format("{} (pid {}/{})", printable_comm(waker.comm), waker.pid, waker.tid);
  // From an interrupt or a timer, the task is only where it landed: say so first.
  switch (waker.context) {
    case WakeContext::Task: break;
    case WakeContext::Interrupt: return "an interrupt on " + who;
    case WakeContext::Timer: return "a timer on " + who;
  }
  return who;
}

}  // namespace wp
