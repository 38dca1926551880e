// SPDX-License-Identifier: Apache-2.0
// The hook table against the BPF object the build made: every program a plan can name is in
// it where the table says, and every program in it is plannable.
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "probe/hook_plan.h"

namespace wp {
namespace {

struct BpfObjectCloser {
  void operator()(bpf_object* obj) const { bpf_object__close(obj); }
};

// Program name -> ELF section (its attach spec), read without loading anything.
std::map<std::string, std::string> programs_in_bpf_object() {
  std::unique_ptr<bpf_object, BpfObjectCloser> obj(
      bpf_object__open_file(WRITEPATH_BPF_OBJECT, nullptr));
  if (!obj) {
    ADD_FAILURE() << "cannot open " << WRITEPATH_BPF_OBJECT;
    return {};
  }
  std::map<std::string, std::string> out;
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj.get()) {
    out[bpf_program__name(prog)] = bpf_program__section_name(prog);
  }
  return out;
}

// The sections a program of `kind` attaching to `event` may have.
std::set<std::string> sections_for(const HookVariant& v, const std::string& event) {
  switch (v.kind) {
    case AttachKind::Fentry:
      // A syscall entry program's section names no function: the agent sets it before load.
      if (v.syscall_entry) return {"fentry", "fexit"};
      return {"fentry/" + event, "fexit/" + event};
    case AttachKind::TpBtf: return {"tp_btf/" + event};
    case AttachKind::RawTp: return {"raw_tp/" + event};
    case AttachKind::Tracepoint: return {"tracepoint/" + v.category + "/" + event};
  }
  return {};
}

// Every program any plan can name is in the object, with the attach point the table gives
// for it: a renamed program or a moved attach point fails here, not on some kernel at run
// time.
TEST(HookPlanObject, EveryPlannableProgramIsInTheBpfObjectWhereTheTableSays) {
  const auto in_object = programs_in_bpf_object();
  ASSERT_FALSE(in_object.empty());
  for (const auto& hook : hook_table()) {
    ASSERT_FALSE(hook.variants.empty()) << hook.name;
    for (const auto& v : hook.variants) {
      ASSERT_FALSE(v.programs.empty()) << hook.name;
      for (const auto& [program, event] : v.programs) {
        auto it = in_object.find(program);
        if (it == in_object.end()) {
          ADD_FAILURE() << hook.name << ": " << program << " is not in " << WRITEPATH_BPF_OBJECT;
          continue;
        }
        EXPECT_EQ(sections_for(v, event).count(it->second), 1u)
            << hook.name << ": " << program << " is in section " << it->second << ", not "
            << attach_kind_name(v.kind) << " " << event;
      }
    }
  }
}

// And the other way: a program in the object that no variant names would never be loaded.
TEST(HookPlanObject, EveryProgramInTheBpfObjectIsPlannable) {
  std::set<std::string> plannable;
  for (const auto& hook : hook_table())
    for (const auto& v : hook.variants)
      for (const auto& program : v.programs) plannable.insert(program.name);
  for (const auto& [name, section] : programs_in_bpf_object())
    EXPECT_EQ(plannable.count(name), 1u) << name << " (" << section << ") is in no hook variant";
}

}  // namespace
}  // namespace wp
