#include "probe/devices.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>

namespace wp {
namespace fs = std::filesystem;

namespace {

std::string read_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::optional<DevT> parse_majmin(const std::string& text) {
  unsigned major = 0, minor = 0;
  char colon = 0;
  if (std::sscanf(text.c_str(), "%u%c%u", &major, &colon, &minor) != 3 || colon != ':')
    return std::nullopt;
  return make_dev(major, minor);
}

}  // namespace

std::vector<DeviceInfo> list_block_devices(const std::string& sysfs) {
  std::vector<DeviceInfo> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(sysfs) / "class/block", ec)) {
    DeviceInfo info;
    info.name = entry.path().filename().string();
    auto dev = parse_majmin(read_line(entry.path() / "dev"));
    if (!dev) continue;
    info.dev = *dev;
    info.disk = *dev;
    fs::path disk_dir = fs::canonical(entry.path(), ec);
    if (fs::exists(entry.path() / "partition", ec)) {
      // A partition's sysfs directory sits inside its disk's.
      if (auto disk = parse_majmin(read_line(disk_dir.parent_path() / "dev"))) info.disk = *disk;
      disk_dir = disk_dir.parent_path();
    }
    std::string cache = read_line(disk_dir / "queue/write_cache");
    info.volatile_write_cache = cache.empty() || cache == "write back";
    info.fua = read_line(disk_dir / "queue/fua") == "1";
    out.push_back(std::move(info));
  }
  return out;
}

std::optional<DeviceInfo> find_block_device(const std::string& spec, const std::string& sysfs) {
  std::optional<DevT> wanted = parse_majmin(spec);
  std::string name = spec;
  if (!wanted && spec.rfind("/dev/", 0) == 0) {
    struct stat st {};
    if (::stat(spec.c_str(), &st) == 0 && S_ISBLK(st.st_mode))
      wanted = make_dev(major(st.st_rdev), minor(st.st_rdev));
    name = spec.substr(5);
  }
  for (auto& info : list_block_devices(sysfs)) {
    if ((wanted && info.dev == *wanted) || (!wanted && info.name == name)) return info;
  }
  return std::nullopt;
}

}  // namespace wp
