// SPDX-License-Identifier: Apache-2.0
#include "decode/events.h"

#include <gtest/gtest.h>

namespace wp {
namespace {

TEST(DevString, MajorColonMinor) {
  EXPECT_EQ(dev_string(make_dev(253, 0)), "253:0");
  EXPECT_EQ(dev_string(make_dev(8, 17)), "8:17");
  EXPECT_EQ(dev_string(make_dev(259, 1048575)), "259:1048575");
  EXPECT_EQ(dev_string(0), "0:0");
}

TEST(SyscallName, AllNames) {
  EXPECT_STREQ(syscall_name(Syscall::Write), "write");
  EXPECT_STREQ(syscall_name(Syscall::Pwrite64), "pwrite64");
  EXPECT_STREQ(syscall_name(Syscall::Writev), "writev");
  EXPECT_STREQ(syscall_name(Syscall::Pwritev), "pwritev");
  EXPECT_STREQ(syscall_name(Syscall::Pwritev2), "pwritev2");
  EXPECT_STREQ(syscall_name(Syscall::Fsync), "fsync");
  EXPECT_STREQ(syscall_name(Syscall::Fdatasync), "fdatasync");
  EXPECT_STREQ(syscall_name(Syscall::SyncFileRange), "sync_file_range");
  EXPECT_STREQ(syscall_name(Syscall::Syncfs), "syncfs");
  EXPECT_STREQ(syscall_name(Syscall::Sync), "sync");
}

TEST(IsWriteSyscall, WritesOnly) {
  EXPECT_TRUE(is_write_syscall(Syscall::Write));
  EXPECT_TRUE(is_write_syscall(Syscall::Pwrite64));
  EXPECT_TRUE(is_write_syscall(Syscall::Writev));
  EXPECT_TRUE(is_write_syscall(Syscall::Pwritev));
  EXPECT_TRUE(is_write_syscall(Syscall::Pwritev2));
  EXPECT_FALSE(is_write_syscall(Syscall::Fsync));
  EXPECT_FALSE(is_write_syscall(Syscall::Fdatasync));
  EXPECT_FALSE(is_write_syscall(Syscall::SyncFileRange));
  EXPECT_FALSE(is_write_syscall(Syscall::Syncfs));
  EXPECT_FALSE(is_write_syscall(Syscall::Sync));
}

TEST(Rwbs, PlainOps) {
  EXPECT_EQ(rwbs(ReqOp::Write, 0, 4096), "W");
  EXPECT_EQ(rwbs(ReqOp::Read, 0, 4096), "R");
  EXPECT_EQ(rwbs(ReqOp::Discard, 0, 4096), "D");
  EXPECT_EQ(rwbs(ReqOp::Flush, 0, 0), "F");
  EXPECT_EQ(rwbs(ReqOp::Other, 0, 0), "N");
  // Mainline blk_fill_rwbs has no case for write-zeroes: it falls to 'N'.
  EXPECT_EQ(rwbs(ReqOp::WriteZeroes, 0, 4096), "N");
}

TEST(Rwbs, FlushRequestPrintsFF) {
  EXPECT_EQ(rwbs(ReqOp::Flush, req_flag::kPreflush, 0), "FF");
  EXPECT_EQ(rwbs(ReqOp::Flush, req_flag::kPreflush | req_flag::kSync, 0), "FFS");
}

TEST(Rwbs, FlagOrder) {
  EXPECT_EQ(rwbs(ReqOp::Write, req_flag::kSync, 4096), "WS");
  EXPECT_EQ(rwbs(ReqOp::Write, req_flag::kFua, 4096), "WF");
  EXPECT_EQ(rwbs(ReqOp::Write, req_flag::kMeta | req_flag::kSync, 4096), "WSM");
  EXPECT_EQ(rwbs(ReqOp::Write, req_flag::kPreflush | req_flag::kFua | req_flag::kSync, 4096),
            "FWFS");
  EXPECT_EQ(rwbs(ReqOp::Write,
                 req_flag::kPreflush | req_flag::kFua | req_flag::kSync | req_flag::kMeta, 4096),
            "FWFSM");
}

}  // namespace
}  // namespace wp
