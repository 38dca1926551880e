// SPDX-License-Identifier: Apache-2.0
// strace as a truth the tracer did not compute: `strace -f -qq -y -s 0 -e signal=none -o LOG`
// of an application's run, read back as its write and sync calls, each with the file's path
// as strace resolved the descriptor when the call returned (-y) and the call's return value.
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace wp::testing::strace {

struct Call {
  int pid = 0;
  std::string name;  // pwrite64, fdatasync, …
  std::string path;  // of the first argument's descriptor; " (deleted)" is dropped
  std::int64_t ret = 0;
  int error = 0;  // 1 when the call returned -1 (the errno's name is in `errno_name`)
  std::string errno_name;
};

// The command line that produces what `parse` reads (SYSCALLS: strace's -e trace= list).
inline std::vector<std::string> command(const std::string& log, const std::string& syscalls) {
  return {"strace", "-f", "-qq", "-y", "-s", "0", "-e", "signal=none", "-e", "trace=" + syscalls,
          "-o",     log};
}

namespace detail {

// "3</a/b>, …" → "/a/b"; empty when the first argument names no file.
inline std::string first_path(const std::string& args) {
  const auto open = args.find('<');
  const auto comma = args.find(',');
  if (open == std::string::npos || (comma != std::string::npos && comma < open)) return "";
  const auto close = args.find(">", open);
  if (close == std::string::npos) return "";
  std::string path = args.substr(open + 1, close - open - 1);
  const std::string deleted = " (deleted)";
  if (path.size() > deleted.size() && path.ends_with(deleted))
    path.resize(path.size() - deleted.size());
  return path;
}

// "… = 8192" or "… = -1 EIO (Input/output error)".
inline void read_result(const std::string& tail, Call& c) {
  const auto eq = tail.rfind(" = ");
  if (eq == std::string::npos) return;
  std::istringstream in(tail.substr(eq + 3));
  in >> c.ret;
  if (c.ret == -1) {
    c.error = 1;
    in >> c.errno_name;
  }
}

}  // namespace detail

// Each line is "PID name(args) = ret", or a call split around another thread's:
// "PID name(args <unfinished ...>" then "PID <... name resumed>…) = ret".
inline std::vector<Call> parse(const std::string& text) {
  std::vector<Call> calls;
  std::map<int, Call> unfinished;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream head(line);
    Call c;
    if (!(head >> c.pid)) continue;
    std::string rest;
    std::getline(head, rest);
    const auto start = rest.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    rest = rest.substr(start);
    if (rest.starts_with("<... ")) {
      auto it = unfinished.find(c.pid);
      if (it == unfinished.end()) continue;
      Call done = it->second;
      unfinished.erase(it);
      detail::read_result(rest, done);
      calls.push_back(done);
      continue;
    }
    const auto paren = rest.find('(');
    if (paren == std::string::npos) continue;
    c.name = rest.substr(0, paren);
    c.path = detail::first_path(rest.substr(paren + 1));
    if (rest.ends_with("<unfinished ...>")) {
      unfinished[c.pid] = c;
      continue;
    }
    detail::read_result(rest, c);
    calls.push_back(c);
  }
  return calls;
}

}  // namespace wp::testing::strace
