// SPDX-License-Identifier: Apache-2.0
// The event script reader (record/event_script.h): what each line becomes, and the one error
// line (with its line number) a script that cannot be read gets.
#include "event_script.h"

#include <gtest/gtest.h>

#include <sstream>

namespace wp {
namespace {

ParsedScript parse(const std::string& text) {
  std::istringstream in(text);
  return parse_event_script(in);
}

const Event& event_at(const EventScript& script, std::size_t i) {
  return std::get<Event>(script.steps.at(i));
}

constexpr const char* kDevices =
    "device vda  253:0 cache=volatile fua\n"
    "device vda1 253:1 disk=vda   # a partition\n";

TEST(EventScript, DevicesNameTheirDisksAndCaches) {
  const ParsedScript parsed = parse(std::string(kDevices) + "device sdb 8:16 cache=none\n");
  ASSERT_TRUE(parsed.script) << parsed.error;
  const auto& devices = parsed.script->devices;
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0].dev, make_dev(253, 0));
  EXPECT_EQ(devices[0].disk, make_dev(253, 0));
  EXPECT_TRUE(devices[0].volatile_write_cache);
  EXPECT_TRUE(devices[0].fua);
  EXPECT_EQ(devices[1].name, "vda1");
  EXPECT_EQ(devices[1].disk, make_dev(253, 0));
  EXPECT_FALSE(devices[1].fua);
  EXPECT_FALSE(devices[2].volatile_write_cache);
}

TEST(EventScript, ACallsLineIsItsReturnAndDurItsLatency) {
  const ParsedScript parsed =
      parse(std::string(kDevices) +
            "1ms pwrite64 tid=100 comm=writer fd=4 dev=vda1 ino=42 pos=8192 ret=4096 dirtied=1 "
            "dur=250us\n"
            "+2ms fsync tid=101 pid=100 dev=vda1 ino=42 dur=1.5ms\n");
  ASSERT_TRUE(parsed.script) << parsed.error;
  const auto& write = std::get<SyscallEvent>(event_at(*parsed.script, 0));
  EXPECT_EQ(write.syscall, Syscall::Pwrite64);
  EXPECT_EQ(write.start_ns, 750'000u);
  EXPECT_EQ(write.end_ns, 1'000'000u);
  EXPECT_EQ(write.pid, 100u);
  EXPECT_EQ(write.comm, "writer");
  EXPECT_EQ(write.fd, 4);
  EXPECT_EQ(write.dev, make_dev(253, 1));
  EXPECT_EQ(write.pos, 8192u);
  EXPECT_EQ(write.count, 4096u);
  EXPECT_EQ(write.pages_dirtied, 1u);
  EXPECT_EQ(write.file_flags, file_flag::kRegular);
  const auto& sync = std::get<SyscallEvent>(event_at(*parsed.script, 1));
  EXPECT_EQ(sync.syscall, Syscall::Fsync);
  EXPECT_EQ(sync.end_ns, 3'000'000u);  // relative to the previous line's time
  EXPECT_EQ(sync.start_ns, 1'500'000u);
  EXPECT_EQ(sync.pid, 100u);
  EXPECT_EQ(sync.tid, 101u);
  EXPECT_EQ(sync.ret, 0);
}

TEST(EventScript, PointerNamesStandForOnePointerEach) {
  const ParsedScript parsed = parse(std::string(kDevices) +
                                    "0 issue rq=r1 disk=vda sector=8 bytes=4096\n"
                                    "1us issue rq=r2 disk=vda sector=16 bytes=4096\n"
                                    "2us complete rq=r1 disk=vda sector=8 bytes=4096 error=-EIO\n"
                                    "3us issue rq=0x1234 disk=8:0 op=flush flags=preflush\n");
  ASSERT_TRUE(parsed.script) << parsed.error;
  const auto& a = std::get<RequestEvent>(event_at(*parsed.script, 0));
  const auto& b = std::get<RequestEvent>(event_at(*parsed.script, 1));
  const auto& done = std::get<RequestEvent>(event_at(*parsed.script, 2));
  const auto& flush = std::get<RequestEvent>(event_at(*parsed.script, 3));
  EXPECT_NE(a.rq, b.rq);
  EXPECT_EQ(done.rq, a.rq);
  EXPECT_EQ(done.kind, RequestEventKind::Complete);
  EXPECT_EQ(done.error, -5);
  EXPECT_EQ(flush.rq, 0x1234u);
  EXPECT_EQ(flush.disk, make_dev(8, 0));
  EXPECT_EQ(flush.op, ReqOp::Flush);
  EXPECT_EQ(flush.flags, req_flag::kPreflush);
}

TEST(EventScript, BioCarriesItsExtentsAndTakesItsDisksFromTheDevice) {
  const ParsedScript parsed =
      parse(std::string(kDevices) +
            "5us bio bio=b1 tid=7 why=background dev=vda1 sector=2048 bytes=12288 "
            "flags=sync,fua ino=42 ext=0+1,4+2\n"
            "6us split bio=b2 tid=7 dev=vda1 sector=2048 bytes=4096 anon\n");
  ASSERT_TRUE(parsed.script) << parsed.error;
  const auto& bio = std::get<BioEvent>(event_at(*parsed.script, 0));
  EXPECT_EQ(bio.bdev, make_dev(253, 1));
  EXPECT_EQ(bio.disk, make_dev(253, 0));
  EXPECT_EQ(bio.why, SubmitWhy::Background);
  EXPECT_TRUE(bio.bio_flags & bio_flag::kKernelThread);  // a flusher's reason
  EXPECT_EQ(bio.flags, req_flag::kSync | req_flag::kFua);
  EXPECT_EQ(bio.file_dev, make_dev(253, 1));
  ASSERT_EQ(bio.nr_extents, 2u);
  EXPECT_EQ(bio.extents[1].index, 4u);
  EXPECT_EQ(bio.extents[1].pages, 2u);
  const auto& split = std::get<BioEvent>(event_at(*parsed.script, 1));
  EXPECT_EQ(split.kind, BioKind::Split);
  // A kworker's by the thread's default name: a kernel thread's bio, as the kernel flags it.
  EXPECT_EQ(split.bio_flags, bio_flag::kAnon | bio_flag::kKernelThread);
  EXPECT_EQ(split.file_dev, 0u);
}

TEST(EventScript, NameChangeCallsAndTheOpenatThatCreates) {
  const ParsedScript parsed =
      parse(std::string(kDevices) +
            "10us rename tid=9 old=a.tmp new=a dir=vda1/2 new_dir=vda1/2 dur=3us\n"
            "20us ns.openat tid=9 name=\"my file\" flags=create,trunc ret=5 dir=vda1/2\n"
            "30us openat tid=9 fd=5 dev=vda1 ino=44 ret=4096\n");
  ASSERT_TRUE(parsed.script) << parsed.error;
  const auto& rename = std::get<NameChangeEvent>(event_at(*parsed.script, 0));
  EXPECT_EQ(rename.op, NameChangeOp::Rename);
  EXPECT_EQ(rename.names[0], "a.tmp");
  EXPECT_EQ(rename.names[1], "a");
  EXPECT_EQ(rename.dir_dev[1], make_dev(253, 1));
  EXPECT_EQ(rename.dir_ino[1], 2u);
  const auto& open = std::get<NameChangeEvent>(event_at(*parsed.script, 1));
  EXPECT_EQ(open.op, NameChangeOp::Open);
  EXPECT_EQ(open.syscall, Syscall::OpenatCreate);
  EXPECT_EQ(open.names[0], "my file");
  EXPECT_EQ(open.flags, std::uint32_t{WP_NS_CREATE | WP_NS_TRUNC});
  EXPECT_EQ(open.ret, 5);
  // Without the prefix, openat is the write slot (an overlay copy-up).
  EXPECT_EQ(std::get<SyscallEvent>(event_at(*parsed.script, 2)).syscall, Syscall::Openat);
}

TEST(EventScript, SleepLinesAddStacksToTheirOffCpuEventAndNameTheirFrames) {
  const ParsedScript parsed =
      parse(std::string(kDevices) +
            "1ms offcpu start=100us tid=100 inode_lock=200us holder_tid=101 holder_comm=other\n"
            "sleep ns=600us count=3 flag=writeback stack=\"folio_wait_bit;ext4_sync_file\" "
            "waker_tid=0 waker_stack=\"blk_mq_end_request\"\n"
            "sleep ns=100us stack=\"ext4_sync_file\"\n");
  ASSERT_TRUE(parsed.script) << parsed.error;
  const auto& steps = parsed.script->steps;
  // Each frame's name comes once, before the event holding it.
  std::vector<std::string> symbols;
  for (const auto& step : steps)
    if (const auto* symbol = std::get_if<ScriptSymbol>(&step)) symbols.push_back(symbol->name);
  EXPECT_EQ(symbols,
            (std::vector<std::string>{"folio_wait_bit", "ext4_sync_file", "blk_mq_end_request"}));
  const auto& offcpu = std::get<OffCpuEvent>(std::get<Event>(steps.back()));
  EXPECT_EQ(offcpu.start_ns, 100'000u);
  EXPECT_EQ(offcpu.inode_lock_waits, 1u);
  ASSERT_TRUE(offcpu.inode_lock_holder);
  EXPECT_EQ(offcpu.inode_lock_holder->comm, "other");
  ASSERT_EQ(offcpu.sleeps.size(), 2u);
  EXPECT_EQ(offcpu.sleeps[0].sleeps, 3u);
  EXPECT_EQ(offcpu.sleeps[0].flag, SleepFlag::WritebackWait);
  ASSERT_EQ(offcpu.sleeps[0].stack.addrs.size(), 2u);
  EXPECT_EQ(offcpu.sleeps[1].stack.addrs[0], offcpu.sleeps[0].stack.addrs[1]);
  ASSERT_TRUE(offcpu.sleeps[0].waker);
  EXPECT_EQ(offcpu.sleeps[0].waker->tid, 0u);
  EXPECT_EQ(offcpu.sleeps[0].waker->stack.addrs.size(), 1u);
}

// A chroot'ed writer's path record: its own path, and its namespace's beside it.
TEST(EventScript, APathLineTakesTheNamespacesPathBesideTheWritersOwn) {
  const ParsedScript parsed = parse(std::string(kDevices) +
                                    "0 path dev=vda1 ino=7 path=/data/x ns_path=/srv/box/data/x "
                                    "mnt_ns=4026531841\n"
                                    "1us path dev=vda1 ino=8 path=\"/a b\"\n");
  ASSERT_TRUE(parsed.script) << parsed.error;
  const auto& chrooted = std::get<FilePathEvent>(event_at(*parsed.script, 0));
  EXPECT_EQ(chrooted.dev, make_dev(253, 1));
  EXPECT_EQ(chrooted.path, "/data/x");
  EXPECT_EQ(chrooted.ns_path, "/srv/box/data/x");
  EXPECT_EQ(chrooted.mnt_ns, 4026531841u);
  const auto& plain = std::get<FilePathEvent>(event_at(*parsed.script, 1));
  EXPECT_EQ(plain.path, "/a b");
  EXPECT_EQ(plain.ns_path, "");
}

TEST(EventScript, LossesCountAgainstTheirHook) {
  const ParsedScript parsed = parse("5ms lost hook=bio count=3\n");
  ASSERT_TRUE(parsed.script) << parsed.error;
  const auto& loss = std::get<ScriptLoss>(parsed.script->steps.at(0));
  EXPECT_EQ(loss.counts[WP_HOOK_BIO], 3u);
  EXPECT_EQ(loss.counts[WP_HOOK_SYSCALL], 0u);
}

// Every mistake is one message naming its line; nothing half-read is returned.
TEST(EventScript, AMistakeIsNamedWithItsLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"0 pwrite64 tid=1 ret=4096 colour=blue\n", "1: pwrite64 has no field 'colour'"},
      {"\n\n0 pwrite64 tid=1\n", "3: ret= is required for a write"},
      {"0 teleport tid=1\n", "1: unknown event kind 'teleport'"},
      {"0 issue rq=r1 disk=vdz\n", "1: no device named 'vdz'"},
      {"0 issue rq=r1 disk=8:0 op=erase\n", "1: op: unknown 'erase' (one of read, write"},
      {"5 fsync tid=1\n", "1: time: '5' is not a time"},
      {"1ms fsync tid=1 dur=2ms\n", "1: dur= reaches before time 0"},
      {"0 bio bio=b1 dev=8:0 bytes=4096\n", "1: a write bio of file pages needs ext="},
      {"0 path dev=8:0 ino=1 path=\"/a b\n", "1: unterminated quote"},
      {"sleep ns=1us\n", "1: a sleep line follows an offcpu line"},
      {"0 lost hook=disk\n", "1: hook: unknown 'disk'"},
      {"0 pwrite64 tid=1 ret=-EWHAT\n", "1: ret: unknown errno 'EWHAT'"},
      {"0 pwrite64 tid=1 tid=2 ret=1\n", "1: 'tid' given twice"},
      {"0 discard dev=8:0 deleted\n", "1: discard has no field 'deleted'"},
      {"0 path dev=8:0 ino=1 path=/a deleted=yes\n", "1: deleted is a flag"},
      {"colour blue\n", "1: 'colour' is neither a directive"},
      {"1us pwritev2 tid=1 ret=1 flags=RWF_DSYNC,RWF_TYPO\n", "1: flags: unknown 'RWF_TYPO'"},
      {"1us rename tid=1 flags=noreplace,excange\n", "1: flags: unknown 'excange'"},
  };
  for (const auto& [text, message] : cases) {
    const ParsedScript parsed = parse(text);
    EXPECT_FALSE(parsed.script) << text;
    EXPECT_TRUE(parsed.error.starts_with(message)) << text << " → " << parsed.error;
  }
}

}  // namespace
}  // namespace wp
