// SPDX-License-Identifier: Apache-2.0
// What each field type of the record tables (bpf/record_tables.h) is to the agent: one tag per
// type token, wp::field::<token>, with the C++ type the events hold it in, how the docs name
// it, and how a record's value becomes the event's (`decode`: false when the value is not one
// the record may hold, which makes the record malformed). The events' fields, their decoding
// and the docs' tables are made from the record tables with these; event scripts read and
// write them by the same tags (tests/support).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "decode/kinds.h"

namespace wp::field {

// Explicit padding: nothing to the agent. Events keep it as an empty member (with
// [[no_unique_address]]) so that every table's fields are members of its event.
struct Pad {
  bool operator==(const Pad&) const = default;
};

// A value copied as it is.
template <typename T, typename C = T>
struct Plain {
  using type = T;
  static bool decode(T& out, const C& in) {
    out = static_cast<T>(in);
    return true;
  }
};

struct u8 : Plain<std::uint8_t> {
  static constexpr std::string_view doc = "u8";
};
struct u16 : Plain<std::uint16_t> {
  static constexpr std::string_view doc = "u16";
};
struct u32 : Plain<std::uint32_t> {
  static constexpr std::string_view doc = "u32";
};
struct u64 : Plain<std::uint64_t> {
  static constexpr std::string_view doc = "u64";
};
struct s32 : Plain<std::int32_t> {
  static constexpr std::string_view doc = "s32";
};
struct s64 : Plain<std::int64_t> {
  static constexpr std::string_view doc = "s64";
};
struct dev : Plain<DevT, wp_t_dev> {
  static constexpr std::string_view doc = "dev_t (u32)";
};
struct ns : Plain<Nanos, wp_t_ns> {
  static constexpr std::string_view doc = "ns (u64)";
};
struct ptr : Plain<std::uint64_t, wp_t_ptr> {
  static constexpr std::string_view doc = "pointer (u64)";
};

// A task's name, NUL-padded in the record.
struct comm {
  using type = std::string;
  static constexpr std::string_view doc = "char[16]";
  static bool decode(std::string& out, const wp_t_comm& in) {
    out.assign(in, strnlen(in, WP_COMM_LEN));
    return true;
  }
};

template <typename C>
struct Padding {
  using type = Pad;
  static constexpr std::string_view doc = "padding";
  static bool decode(Pad&, const C&) { return true; }
};
struct pad8 : Padding<wp_t_pad8> {};
struct pad16 : Padding<wp_t_pad16> {};
struct pad32 : Padding<wp_t_pad32> {};
struct pad8x2 : Padding<wp_t_pad8x2> {};
struct pad8x3 : Padding<wp_t_pad8x3> {};
struct pad8x7 : Padding<wp_t_pad8x7> {};

template <typename T, std::size_t N>
struct Array {
  using type = std::array<T, N>;
  template <typename C>
  static bool decode(type& out, const C (&in)[N]) {
    for (std::size_t i = 0; i < N; ++i) out[i] = static_cast<T>(in[i]);
    return true;
  }
};
struct u64x2 : Array<std::uint64_t, 2> {
  static constexpr std::string_view doc = "u64[2]";
};
struct u32x2 : Array<DevT, 2> {
  static constexpr std::string_view doc = "u32[2]";
};
struct u16x2 : Array<std::uint16_t, 2> {
  static constexpr std::string_view doc = "u16[2]";
};
struct frames : Array<std::uint64_t, WP_STACK_DEPTH> {
  static constexpr std::string_view doc = "u64[WP_STACK_DEPTH]";
};

// Bytes the decoder reads itself (a file path's names, a bio's extents, a call's sleeping
// stacks): no event field of their own.
template <typename C>
struct Read {
  using type = Pad;
  static bool decode(Pad&, const C&) { return true; }
};
struct path_names : Read<wp_t_path_names> {
  static constexpr std::string_view doc = "char[WP_PATH_BYTES]";
};
struct extents : Read<wp_t_extents> {
  static constexpr std::string_view doc = "struct wp_extent[WP_BIO_MAX_EXTENTS]";
};
struct offcpu_slots : Read<wp_t_offcpu_slots> {
  static constexpr std::string_view doc = "struct wp_offcpu_slot[WP_OFFCPU_SLOTS]";
};

// A flag set: its bits as the record has them.
template <typename T, typename C>
struct Flags : Plain<T, C> {};
struct file_flags8 : Flags<std::uint32_t, wp_t_file_flags8> {
  static constexpr std::string_view doc = "enum wp_file_flags (u8)";
};
struct call_flags16 : Flags<std::uint32_t, wp_t_call_flags16> {
  static constexpr std::string_view doc = "enum wp_call_flags (u16)";
};
struct req_flags32 : Flags<std::uint32_t, wp_t_req_flags32> {
  static constexpr std::string_view doc = "enum wp_req_flags (u32)";
};
struct bio_flags8 : Flags<std::uint8_t, wp_t_bio_flags8> {
  static constexpr std::string_view doc = "enum wp_bio_flags (u8)";
};
struct iclog_flags32 : Flags<std::uint32_t, wp_t_iclog_flags32> {
  static constexpr std::string_view doc = "enum wp_iclog_flags (u32)";
};
struct path_flags16 : Flags<std::uint16_t, wp_t_path_flags16> {
  static constexpr std::string_view doc = "enum wp_path_flags (u16)";
};
struct ns_flags16 : Flags<std::uint32_t, wp_t_ns_flags16> {
  static constexpr std::string_view doc = "enum wp_ns_flags (u16)";
};
struct offcpu_flags8 : Flags<std::uint8_t, wp_t_offcpu_flags8> {
  static constexpr std::string_view doc = "enum wp_offcpu_slot_flags (u8)";
};
struct offcpu_cause8 : Flags<std::uint8_t, wp_t_offcpu_cause8> {
  static constexpr std::string_view doc = "enum wp_offcpu_cause (u8)";
};
struct fault_flags16 : Flags<std::uint16_t, wp_t_fault_flags16> {
  static constexpr std::string_view doc = "enum wp_fault_flags (u16)";
};
// The raw values the decoder maps itself (a call's WP_SYS_*, a name-change call's op).
struct syscall8 : Plain<std::uint8_t, wp_t_syscall8> {
  static constexpr std::string_view doc = "enum wp_syscall (u8)";
};

// An enumeration: the values from Min to Max are the ones the record may hold.
template <typename E, typename C, C Min, C Max>
struct Ranged {
  using type = E;
  static bool decode(E& out, const C& in) {
    if (in < Min || in > Max) return false;
    out = static_cast<E>(in);
    return true;
  }
};
struct jbd2_phase32 : Ranged<JournalPhase, wp_t_jbd2_phase32, WP_JBD2_START, WP_JBD2_END> {
  static constexpr std::string_view doc = "enum wp_journal_phase (u32)";
};
struct rq_event8 : Ranged<RequestEventKind, wp_t_rq_event8, WP_RQ_INSERT, WP_RQ_REQUEUE> {
  static constexpr std::string_view doc = "enum wp_request_event (u8)";
};
struct nvme_event8 : Ranged<NvmeEventKind, wp_t_nvme_event8, WP_NVME_SETUP, WP_NVME_COMPLETE> {
  static constexpr std::string_view doc = "enum wp_nvme_event (u8)";
};
struct inline_fs8 : Ranged<InlineFs, wp_t_inline_fs8, WP_INLINE_BTRFS, WP_INLINE_EXT4> {
  static constexpr std::string_view doc = "enum wp_inline_fs (u8)";
};
struct fs_log32 : Ranged<FsLogKind, wp_t_fs_log32, WP_XFS_LOG_FORCE, WP_XFS_ICLOG_DONE> {
  static constexpr std::string_view doc = "enum wp_fs_log_event (u32)";
};
struct bio_kind8 : Ranged<BioKind, wp_t_bio_kind8, WP_BIO_QUEUE, WP_BIO_SPLIT> {
  static constexpr std::string_view doc = "enum wp_bio_kind (u8)";
};
// A reason this agent does not know (a newer program's) is Unknown, never malformed.
struct why8 {
  using type = SubmitWhy;
  static constexpr std::string_view doc = "enum wp_why (u8)";
  static bool decode(SubmitWhy& out, const wp_t_why8& in);
};
struct ns_op8 : Ranged<NameChangeOp, wp_t_ns_op8, WP_NS_RENAME, WP_NS_SEND> {
  static constexpr std::string_view doc = "enum wp_ns_op (u8)";
};
// REQ_OP_* values the agent does not name are Other, never malformed: a driver may send any.
struct req_op32 {
  using type = ReqOp;
  static constexpr std::string_view doc = "enum wp_req_op (u32)";
  static bool decode(ReqOp& out, const wp_t_req_op32& in);
};

}  // namespace wp::field

// An event's member for a record table's field: its agent type, empty for padding.
#define WP_EVENT_FIELD_(token, name, doc) [[no_unique_address]] ::wp::field::token::type name{};

// The record's fields the event has, decoded into it; false when one holds a value the record
// may not. An event that decodes some fields itself (a bio's extents, a call's flags) lacks
// their members or holds them in another type, and those are left to it.
#define WP_DECODE_FIELD_(token, name, doc)                                     \
  [&](auto& event_) {                                                          \
    if constexpr (requires { event_.name; }) {                                 \
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(event_.name)>, \
                                   ::wp::field::token::type>)                  \
        ok_ = ::wp::field::token::decode(event_.name, record_.name) && ok_;    \
    }                                                                          \
  }(event_out_);

// Calls visit_.template operator()<wp::field::token>("name", event_.name) for each of a record
// table's fields the event holds in its token's type (the ones WP_DECODE_FIELD_ decodes): the
// event scripts' reader and writer (tests/support) walk an event's fields with it.
#define WP_VISIT_FIELD_(token, name, doc)                                                     \
  [&](auto& event_) {                                                                         \
    if constexpr (requires { event_.name; }) {                                                \
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(event_.name)>,                \
                                   ::wp::field::token::type>)                                 \
        visit_.template operator()<::wp::field::token>(std::string_view(#name), event_.name); \
    }                                                                                         \
  }(self_);

// An event's members for a record table's fields, and visit_fields() over them.
#define WP_TABLE_EVENT_FIELDS(FIELDS)       \
  FIELDS(WP_EVENT_FIELD_)                   \
  template <typename Visit>                 \
  void visit_fields(Visit&& visit_) {       \
    auto& self_ = *this;                    \
    FIELDS(WP_VISIT_FIELD_)                 \
  }                                         \
  template <typename Visit>                 \
  void visit_fields(Visit&& visit_) const { \
    const auto& self_ = *this;              \
    FIELDS(WP_VISIT_FIELD_)                 \
  }
