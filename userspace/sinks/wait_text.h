// SPDX-License-Identifier: Apache-2.0
// How the sinks name the parts of a slow call's sleeps and waits: kernel frames as people read
// them, sleep flags, wakers. One place, so the text, Perfetto and HTML outputs agree.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "stitch/timeline.h"

namespace wp {

// Whether `item` is a slow call with named causes (stitch/timeline.h NamedWait).
bool has_named_waits(const Timeline& item);

// "none", "dirty-throttle", "writeback-wait".
const char* sleep_flag_name(SleepFlag flag);

// A stack's frames, innermost first, as the symbolizer named them; an address it could not
// name as "0xffffffff81234567", so no frame goes missing.
std::vector<std::string> frame_names(const KernelStack& stack);

// "jbd2_log_wait_commit+0x9c [jbd2]" → "jbd2_log_wait_commit [jbd2]": the function and its
// module without the offset, which says nothing to a reader and differs between builds.
std::string short_frame(std::string_view frame);

// "at a < b < c": the first `max_frames` of `frames` (innermost first), short, joined by " < "
// (read "called from"); "" for no frames.
std::string frames_line(const std::vector<std::string>& frames, std::size_t max_frames);

// "jbd2/loop0-8 (pid 123, kernel thread)", "wp_workload (pid 456/457)": who woke a sleeper.
std::string waker_text(const Waker& waker);
// "task", "interrupt", "timer" (JSON "context").
const char* wake_context_name(WakeContext c);

}  // namespace wp
