// SPDX-License-Identifier: Apache-2.0
// The script lines of the events made from one record table (decode/events.h's
// WP_TABLE_EVENT_FIELDS): read and written from the table itself, field by field, with
// ScriptValue for each field's text. A field's key is its name in the table (a time's without
// "_ns": the value carries its unit); what differs, and what a line may leave out, is said
// per event below. A field added to a table is a key of its lines at once, both ways, and the
// round trip of every event (tests/unit/event_script_test.cpp) holds the two directions to it.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "script_values.h"

namespace wp::script {

// How a line gives one field, when not by its name alone with 0 when left out.
struct FieldRule {
  std::string_view field;          // its name in the record table
  std::string_view key = {};       // the line's key for it, when not the field's name
  std::string_view fallback = {};  // left out: this value's text, or "=KEY": the text given
                                   // for KEY (if any), or "@": the line's time
  bool required = false;           // never left out
};

// One record table's event as a line. `word` is the line's kind; an event with a `kind_field`
// has one word per value of that field instead, the value's name.
template <typename E>
struct LineOf;

template <>
struct LineOf<RequestEvent> {
  static constexpr std::string_view kind_field = "kind";
  static constexpr FieldRule rules[] = {{.field = "rq", .required = true},
                                        {.field = "disk", .required = true},
                                        {.field = "op", .fallback = "write"}};
};
template <>
struct LineOf<NvmeEvent> {
  static constexpr std::string_view kind_field = "kind";
  static constexpr FieldRule rules[] = {{.field = "rq", .required = true},
                                        {.field = "disk", .required = true},
                                        {.field = "opcode", .fallback = "1"},  // nvme_cmd_write
                                        {.field = "nsid", .fallback = "1"}};
};
template <>
struct LineOf<FsLogEvent> {
  static constexpr std::string_view kind_field = "kind";
  static constexpr FieldRule rules[] = {{.field = "dev", .required = true}};
};
template <>
struct LineOf<JournalEvent> {
  static constexpr std::string_view word = "journal";
  static constexpr FieldRule rules[] = {{.field = "dev", .required = true},
                                        {.field = "transaction", .key = "txn"},
                                        {.field = "phase", .fallback = "start"}};
};
template <>
struct LineOf<ThrottleEvent> {
  static constexpr std::string_view word = "throttle";
  static constexpr FieldRule rules[] = {{.field = "pid", .fallback = "=tid"}};
};
template <>
struct LineOf<CausesEvent> {
  static constexpr std::string_view word = "causes";
  static constexpr FieldRule rules[] = {{.field = "start_ns", .fallback = "@"}};
};
template <>
struct LineOf<DiscardEvent> {
  static constexpr std::string_view word = "discard";
  static constexpr FieldRule rules[] = {{.field = "dev", .required = true},
                                        {.field = "pages", .fallback = "1"}};
};
template <>
struct LineOf<InlineDataEvent> {
  static constexpr std::string_view word = "inline";
  static constexpr FieldRule rules[] = {{.field = "dev", .required = true},
                                        {.field = "fs_dev", .fallback = "=dev"},
                                        {.field = "fs", .fallback = "btrfs"}};
};
template <>
struct LineOf<FsCommitEvent> {
  static constexpr std::string_view word = "fs_commit";
  static constexpr FieldRule rules[] = {{.field = "fs_dev", .required = true}};
};
template <>
struct LineOf<MmapDirtyEvent> {
  static constexpr std::string_view word = "mmap_dirty";
  static constexpr FieldRule rules[] = {{.field = "dev", .required = true},
                                        {.field = "pid", .fallback = "=tid"},
                                        {.field = "comm", .fallback = "app"},
                                        {.field = "pages", .fallback = "1"}};
};
template <>
struct LineOf<FaultEvent> {
  static constexpr std::string_view word = "fault";
  static constexpr FieldRule rules[] = {{.field = "dev", .required = true},
                                        {.field = "pid", .fallback = "=tid"},
                                        {.field = "comm", .fallback = "app"}};
};
template <>
struct LineOf<CgroupEvent> {
  static constexpr std::string_view word = "cgroup";
  static constexpr FieldRule rules[] = {{.field = "pid", .fallback = "=tid"},
                                        {.field = "cgroup_id", .key = "id"}};
};
template <>
struct LineOf<FileViewEvent> {
  static constexpr std::string_view word = "view";
  static constexpr FieldRule rules[] = {{.field = "dev", .required = true},
                                        {.field = "view_dev", .required = true}};
};
template <>
struct LineOf<FuseReplyEvent> {
  static constexpr std::string_view word = "fuse_reply";
  static constexpr FieldRule rules[] = {{.field = "start_ns", .fallback = "@"},
                                        {.field = "opcode", .fallback = "16"},  // FUSE_WRITE
                                        {.field = "daemon_pid", .fallback = "=daemon_tid"}};
};

template <>
struct LineOf<DirtierEvent> {
  static constexpr std::string_view word = "dirtier";
  static constexpr FieldRule rules[] = {{.field = "dev", .required = true},
                                        {.field = "pid", .fallback = "=tid"},
                                        {.field = "comm", .fallback = "app"},
                                        {.field = "cgroup_id", .key = "cgroup"}};
};

template <>
struct LineOf<BystanderIoEvent> {
  static constexpr std::string_view word = "bystander_io";
  static constexpr FieldRule rules[] = {{.field = "disk", .required = true},
                                        {.field = "file_dev", .key = "dev"},
                                        {.field = "cgroup_id", .key = "cgroup"}};
};

using TableEvents =
    std::tuple<RequestEvent, NvmeEvent, FsLogEvent, JournalEvent, ThrottleEvent, CausesEvent,
               DiscardEvent, InlineDataEvent, FsCommitEvent, MmapDirtyEvent, CgroupEvent,
               FileViewEvent, FuseReplyEvent, FaultEvent, DirtierEvent, BystanderIoEvent>;

template <typename E>
constexpr bool kHasKindField = requires {
  LineOf<E>::kind_field;
};

template <typename E>
constexpr FieldRule rule_of(std::string_view field) {
  for (const FieldRule& rule : LineOf<E>::rules)
    if (rule.field == field) return rule;
  return FieldRule{.field = field};
}

template <typename E, typename Token>
std::string key_of(std::string_view field) {
  const FieldRule rule = rule_of<E>(field);
  if (!rule.key.empty()) return std::string(rule.key);
  if (std::is_same_v<Token, field::ns> && field.ends_with("_ns"))
    return std::string(field.substr(0, field.size() - 3));
  return std::string(field);
}

// The texts of a line's fields by key, left-out ones given their fallbacks; `take(key)`
// hands over each key's text from the line (std::optional<std::string>).
template <typename E, typename Take>
std::map<std::string, std::string> line_texts(Take&& take, Nanos at) {
  std::map<std::string, std::string> texts;
  std::vector<std::pair<std::string, FieldRule>> left_out;
  E{}.visit_fields([&]<typename Token>(std::string_view name, const auto&) {
    if constexpr (!Unwritten<Token>) {
      if constexpr (kHasKindField<E>)
        if (name == LineOf<E>::kind_field) return;
      const std::string key = key_of<E, Token>(name);
      if (auto text = take(key))
        texts.emplace(key, std::move(*text));
      else
        left_out.emplace_back(key, rule_of<E>(name));
    }
  });
  for (const auto& [key, rule] : left_out) {
    if (rule.required) throw ScriptError(fmt::format("{}= is required here", key));
    if (rule.fallback == "@") {
      texts.emplace(key, format_duration(at));
    } else if (rule.fallback.starts_with('=')) {
      const auto given = texts.find(std::string(rule.fallback.substr(1)));
      if (given != texts.end()) texts.emplace(key, given->second);
    } else if (!rule.fallback.empty()) {
      texts.emplace(key, rule.fallback);
    }
  }
  return texts;
}

// The event of a line whose kind is `word` (one of E's words), at time `at`.
template <typename E, typename Take>
E read_table_line(std::string_view word, Take&& take, Nanos at, Names& names) {
  std::map<std::string, std::string> texts = line_texts<E>(take, at);
  E ev{};
  ev.ts = at;
  ev.visit_fields([&]<typename Token>(std::string_view name, auto& member) {
    if constexpr (!Unwritten<Token>) {
      if constexpr (kHasKindField<E>) {
        if (name == LineOf<E>::kind_field) {
          ScriptValue<Token>::parse(word, "kind", names, member);
          return;
        }
      }
      const std::string key = key_of<E, Token>(name);
      if (const auto it = texts.find(key); it != texts.end())
        ScriptValue<Token>::parse(it->second, key, names, member);
    }
  });
  return ev;
}

// The line kinds of E: its `word`, or the names of its kind field's values.
template <typename E>
std::vector<std::string_view> words_of() {
  std::vector<std::string_view> words;
  if constexpr (kHasKindField<E>) {
    E{}.visit_fields([&]<typename Token>(std::string_view name, const auto&) {
      if constexpr (requires { ScriptValue<Token>::table(); })
        if (name == LineOf<E>::kind_field)
          for (const auto& entry : ScriptValue<Token>::table()) words.push_back(entry.second);
    });
  } else {
    words.push_back(LineOf<E>::word);
  }
  return words;
}

// Whether `word` is a line kind of E.
template <typename E>
bool is_word_of(std::string_view word) {
  const std::vector<std::string_view> words = words_of<E>();
  return std::ranges::find(words, word) != words.end();
}

// The line of an event made from one record table, without its time: its kind, then each
// field not at what leaving it out gives ("issue rq=0xffff888000001000 disk=vda bytes=4096").
template <typename E>
std::string write_table_line(const E& ev, const Names& names) {
  std::string line;
  std::map<std::string, std::string> texts;  // every field's, by key: fallbacks name others
  ev.visit_fields([&]<typename Token>(std::string_view name, const auto& member) {
    if constexpr (!Unwritten<Token>) {
      const std::string text = ScriptValue<Token>::format(member, names);
      if constexpr (kHasKindField<E>)
        if (name == LineOf<E>::kind_field) line = text;
      texts.emplace(key_of<E, Token>(name), text);
    }
  });
  if constexpr (!kHasKindField<E>) line = LineOf<E>::word;
  ev.visit_fields([&]<typename Token>(std::string_view name, const auto& member) {
    if constexpr (!Unwritten<Token>) {
      if constexpr (kHasKindField<E>)
        if (name == LineOf<E>::kind_field) return;
      const FieldRule rule = rule_of<E>(name);
      const std::string key = key_of<E, Token>(name);
      const std::string& text = texts[key];
      bool left_out = false;
      if (rule.required)
        left_out = false;
      else if (rule.fallback == "@")
        left_out = text == format_duration(ev.ts);
      else if (rule.fallback.starts_with('='))
        left_out = text == texts[std::string(rule.fallback.substr(1))];
      else if (!rule.fallback.empty())
        left_out = text == rule.fallback;
      else
        left_out = member == std::remove_cvref_t<decltype(member)>{};
      if (!left_out) line += fmt::format(" {}={}", key, text);
    }
  });
  return line;
}

}  // namespace wp::script
