// Block devices as sysfs describes them: partition → disk, volatile write cache, FUA.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "decode/events.h"

namespace wp {

std::vector<DeviceInfo> list_block_devices(const std::string& sysfs = "/sys");

// "vda", "/dev/vda", "7:0" → the device; nullopt when no such block device exists.
std::optional<DeviceInfo> find_block_device(const std::string& spec,
                                            const std::string& sysfs = "/sys");

}  // namespace wp
