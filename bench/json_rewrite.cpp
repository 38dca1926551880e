// SPDX-License-Identifier: Apache-2.0
// The replay section's yardstick: how long RapidJSON's own Writer takes to write the very objects
// `writepath report --format json` wrote (the same keys and values, in the same order). Reads
// JSON Lines from FILE in chunks, parses each chunk (not timed), then times writing each of its
// documents with rapidjson::Writer into a string buffer and out to OUT (default /dev/null), as
// the JSON sink writes into its stream: given a file beside report's output, both pay the same
// page-cache copy. Prints "OBJECTS SECONDS" on stdout.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: wp_bench_json_rewrite FILE.jsonl [OUT]\n");
    return 2;
  }
  const char* out_path = argc == 3 ? argv[2] : "/dev/null";
  std::ifstream in(argv[1]);
  if (!in) {
    std::perror(argv[1]);
    return 1;
  }
  std::FILE* sink = std::fopen(out_path, "w");
  if (!sink) {
    std::perror(out_path);
    return 1;
  }
  constexpr std::size_t kChunk = 20000;
  std::vector<rapidjson::Document> docs(kChunk);
  rapidjson::StringBuffer buffer;
  std::string line;
  std::size_t objects = 0;
  std::chrono::steady_clock::duration timed{};
  for (bool more = true; more;) {
    std::size_t n = 0;
    while (n < kChunk && (more = static_cast<bool>(std::getline(in, line)))) {
      docs[n].Parse(line.c_str(), line.size());
      if (docs[n].HasParseError()) {
        std::fprintf(stderr, "wp_bench_json_rewrite: line %zu is not JSON\n", objects + n + 1);
        return 1;
      }
      ++n;
    }
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      buffer.Clear();
      rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
      docs[i].Accept(writer);
      buffer.Put('\n');
      std::fwrite(buffer.GetString(), 1, buffer.GetSize(), sink);
    }
    std::fflush(sink);
    timed += std::chrono::steady_clock::now() - start;
    objects += n;
  }
  const auto start = std::chrono::steady_clock::now();
  if (std::fclose(sink) != 0) {
    std::perror(out_path);
    return 1;
  }
  timed += std::chrono::steady_clock::now() - start;
  std::printf("%zu %.3f\n", objects, std::chrono::duration<double>(timed).count());
  return 0;
}
