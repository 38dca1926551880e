// SPDX-License-Identifier: Apache-2.0
// The write tracker alone: a history of bios and completions handed to it by the test, no
// block tracker, no stitcher.
#include "stitch/io_state.h"
#include "stitch/write_tracker.h"
#include "stitch_fixture.h"

namespace wp::stitch_test {
namespace {

using stitch::Bio;
using stitch::BioHistory;
using stitch::InodeBios;
using stitch::Request;

// The bios "queued so far", as the test says.
class FakeHistory final : public BioHistory {
 public:
  const std::deque<std::shared_ptr<Bio>>* bios_of_thread(std::uint32_t tid) const override {
    const auto it = by_thread_.find(tid);
    return it == by_thread_.end() ? nullptr : &it->second;
  }
  const InodeBios* bios_of_inode(DevT dev, std::uint64_t ino) const override {
    const auto it = by_file_.find({dev, ino});
    return it == by_file_.end() ? nullptr : &it->second;
  }
  void add(const std::shared_ptr<Bio>& bio) {
    by_thread_[bio->ev.tid].push_back(bio);
    if (bio->ev.ino == 0) return;
    InodeBios& file = by_file_[{bio->ev.file_dev, bio->ev.ino}];
    file.bios.push_back(bio);
    file.last_seq = ++seq_;
    file.last_queued_ns = bio->queued_ns;
  }

 private:
  std::map<std::uint32_t, std::deque<std::shared_ptr<Bio>>> by_thread_;
  std::map<std::pair<DevT, std::uint64_t>, InodeBios> by_file_;
  std::uint64_t seq_ = 0;
};

class WriteTrackerAlone : public ::testing::Test {
 protected:
  WriteTrackerAlone() {
    devices_.add(DeviceInfo{kDisk, kDisk, "vda", true, false});
    devices_.add(DeviceInfo{kPart, kDisk, "vda1", true, false});
  }

  std::shared_ptr<Bio> queue(BioEvent ev) {
    auto bio = std::make_shared<Bio>();
    bio->id = ++ids_;
    bio->ev = ev;
    bio->queued_ns = ev.ts;
    history_.add(bio);
    return bio;
  }
  // A request lifetime that carried `bio` and completed at `ts`.
  std::shared_ptr<Request> completed(const std::shared_ptr<Bio>& bio, Nanos ts, int error = 0) {
    auto r = std::make_shared<Request>();
    r->id = ++ids_;
    r->tl = builders::write_request(kDisk, bio->ev.sector, bio->ev.bytes, ts - 100, ts);
    r->tl.error = error;
    r->data_done = true;
    bio->request = r;
    return r;
  }
  void durable(Request& r, Nanos ts) {
    r.tl.durable_ns = ts;
    r.via = DurableVia::Flush;
    tracker_.request_durable(r);
  }
  const WriteTimeline& only_write() const {
    EXPECT_EQ(out_.size(), 1u);
    return std::get<WriteTimeline>(out_.at(0));
  }

  StitchLimits limits_;
  StitchStats stats_;
  stitch::DeviceTable devices_;
  FakeHistory history_;
  stitch::LossLog loss_;
  stitch::ItemIds item_ids_;
  std::vector<Timeline> out_;
  stitch::WriteTracker tracker_{
      limits_, stats_, devices_, history_, loss_, item_ids_, [this](Timeline&& t) {
        out_.push_back(std::move(t));
      }};
  std::uint64_t ids_ = 0;  // the bios' and requests' serial numbers
};

TEST_F(WriteTrackerAlone, BufferedWriteIsWrittenByItsPagesBioAndDurableWithItsRequest) {
  tracker_.on_write(write_call(1000, 2000, 0, 8192, 2), {});
  const auto bio = queue(page_bio(3000, 0xb1, 2048, 0, 2));
  const auto r = completed(bio, 4000);
  tracker_.bio_written(*bio, r);
  EXPECT_TRUE(out_.empty()) << "written, not yet durable";
  EXPECT_EQ(tracker_.waiting_on(), 1u);  // its request
  durable(*r, 5000);
  const WriteTimeline& w = only_write();
  EXPECT_EQ(w.state, WriteState::Durable);
  EXPECT_EQ(w.written_ns, 4000u);
  EXPECT_EQ(w.durable_ns, 5000u);
  EXPECT_EQ(tracker_.waiting_on(), 0u);
  EXPECT_EQ(tracker_.pending(), 0u);
}

TEST_F(WriteTrackerAlone, BioQueuedBeforeTheWriteStartedCarriesOlderData) {
  const auto bio = queue(page_bio(500, 0xb1, 2048, 0, 1));
  tracker_.on_write(write_call(1000, 2000, 0, 4096, 1), {});
  tracker_.bio_written(*bio, completed(bio, 4000));
  EXPECT_TRUE(out_.empty());
  ASSERT_TRUE(tracker_.finish(16));
  EXPECT_EQ(only_write().state, WriteState::Dirty);
}

TEST_F(WriteTrackerAlone, DirectWriteWaitsForItsOwnBio) {
  SyscallEvent call = write_call(1000, 2000, 0, 4096, 0);
  call.file_flags |= file_flag::kDirect;
  const auto bio = queue(anon_bio(1200, 0xb1, 4096, 4096, kWriterTid));
  tracker_.on_write(call, {});
  EXPECT_EQ(tracker_.waiting_on(), 1u);  // its bio
  const auto r = completed(bio, 1800);
  tracker_.bio_written(*bio, r);
  durable(*r, 2500);
  EXPECT_EQ(only_write().state, WriteState::Durable);
  EXPECT_EQ(only_write().requests.size(), 1u);
  EXPECT_EQ(tracker_.waiting_on(), 0u);
}

TEST_F(WriteTrackerAlone, FailedBioLosesTheWriteAndTheNextSyncTakesIt) {
  tracker_.on_write(write_call(1000, 2000, 0, 4096, 1), {});
  const auto bio = queue(page_bio(3000, 0xb1, 2048, 0, 1));
  tracker_.bio_failed(*bio, completed(bio, 4000, -5), 4000);
  const WriteTimeline& w = only_write();
  EXPECT_EQ(w.state, WriteState::Lost);
  EXPECT_EQ(w.lost_error, -5);
  EXPECT_EQ(tracker_.take_lost(kPart, kIno, 5000), std::vector<std::uint64_t>{w.id});
  EXPECT_TRUE(tracker_.take_lost(kPart, kIno, 6000).empty()) << "one sync reports it";
}

TEST_F(WriteTrackerAlone, DiscardedPagesDiscardTheWrite) {
  tracker_.on_write(write_call(1000, 2000, 0, 4096, 1), {});
  tracker_.pages_discarded(discard(3000, 0, 1));
  EXPECT_EQ(only_write().state, WriteState::Discarded);
  EXPECT_EQ(only_write().discarded_ns, 3000u);
}

TEST_F(WriteTrackerAlone, AWriteSpanningALossIsIncomplete) {
  loss_.add(1500);
  tracker_.on_write(write_call(1000, 2000, 0, 4096, 1), {});
  ASSERT_TRUE(tracker_.finish(16));
  EXPECT_TRUE(only_write().incomplete);
}

// Requests that never become durable (abandoned after a loss) leave no waiter behind once the
// writes waiting on them are gone: the tracker's memory follows its pending writes.
TEST_F(WriteTrackerAlone, WaitersOfRequestsThatNeverFinishAreDropped) {
  limits_.max_pending_writes = 8;
  const std::size_t writes = 3 * 4096;
  for (std::size_t i = 0; i < writes; ++i) {
    const Nanos t = 10'000 * (i + 1);
    const std::uint64_t page = i * 2;  // apart: each write its own batch
    tracker_.on_write(write_call(t, t + 100, page * 4096, 4096, 1), {});
    const auto bio = queue(page_bio(t + 200, 0xb000 + i, 2048 + 16 * i, page, 1));
    tracker_.bio_written(*bio, completed(bio, t + 300));  // written; never durable
    tracker_.age_out(t + 400);
  }
  EXPECT_LE(tracker_.pending(), 8u);
  EXPECT_LE(tracker_.waiting_on(), 2 * tracker_.pending() + 4096);
  EXPECT_EQ(out_.size() + tracker_.pending(), writes);
}

}  // namespace
}  // namespace wp::stitch_test
