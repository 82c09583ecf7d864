#include "decode/tracepoint_format.h"

#include <cctype>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace perfring {
namespace {

absl::string_view Trim(absl::string_view s) { return absl::StripAsciiWhitespace(s); }

// The value of "KEY:VALUE" in one of a field line's ';'-separated parts.
bool PartValue(absl::string_view part, absl::string_view key, absl::string_view* value) {
  part = Trim(part);
  if (!absl::ConsumePrefix(&part, key) || !absl::ConsumePrefix(&part, ":")) return false;
  *value = Trim(part);
  return true;
}

bool IsCharType(absl::string_view type) {
  return type == "char" || type == "const char" || type == "signed char";
}

// Splits a declaration ("unsigned long args[6]", "__data_loc char[] msg",
// "const char * name") into the field and sets its name, type, kind.
absl::Status ParseDeclaration(absl::string_view decl, TracepointField* f) {
  decl = Trim(decl);
  // The name is the last identifier, possibly followed by [N].
  size_t end = decl.size();
  std::string len_text;
  bool is_array = false;
  if (!decl.empty() && decl.back() == ']') {
    const size_t open = decl.rfind('[');
    if (open == absl::string_view::npos) return absl::InvalidArgumentError("unbalanced '['");
    len_text = std::string(Trim(decl.substr(open + 1, decl.size() - open - 2)));
    end = open;
    is_array = true;
  }
  size_t begin = end;
  while (begin > 0 && (std::isalnum(static_cast<unsigned char>(decl[begin - 1])) || decl[begin - 1] == '_')) {
    --begin;
  }
  if (begin == end) return absl::InvalidArgumentError("no field name");
  f->name = std::string(decl.substr(begin, end - begin));
  absl::string_view type = Trim(decl.substr(0, begin));
  f->type = std::string(type);

  const bool data_loc = absl::ConsumePrefix(&type, "__data_loc");
  const bool rel_loc = !data_loc && absl::ConsumePrefix(&type, "__rel_loc");
  if (data_loc || rel_loc) {
    type = Trim(type);
    absl::ConsumeSuffix(&type, "[]");
    f->kind = TracepointField::Kind::kDynamic;
    f->relative = rel_loc;
    f->dynamic_string = IsCharType(Trim(type));
    return absl::OkStatus();
  }
  if (is_array) {
    uint32_t n = 0;
    if (!absl::SimpleAtoi(len_text, &n) || n == 0) n = 0;  // a macro: derive it below
    if (IsCharType(type)) {
      f->kind = TracepointField::Kind::kString;
      f->array_len = n != 0 ? n : f->size;
      return absl::OkStatus();
    }
    if (n != 0 && f->size % n == 0) {
      const uint32_t elem = f->size / n;
      if (elem == 1 || elem == 2 || elem == 4 || elem == 8) {
        f->kind = TracepointField::Kind::kArray;
        f->array_len = n;
        return absl::OkStatus();
      }
    }
    f->kind = TracepointField::Kind::kBytes;
    return absl::OkStatus();
  }
  if (type.find('*') != absl::string_view::npos && (f->size == 4 || f->size == 8)) {
    f->kind = TracepointField::Kind::kPointer;
  } else if (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8) {
    f->kind = TracepointField::Kind::kInteger;
  } else {
    f->kind = TracepointField::Kind::kBytes;
  }
  return absl::OkStatus();
}

// One "field:DECL; offset:N; size:N; signed:N;" line.
absl::StatusOr<TracepointField> ParseFieldLine(absl::string_view line) {
  std::vector<absl::string_view> parts = absl::StrSplit(line, ';');
  absl::string_view decl, offset, size, is_signed;
  if (parts.size() < 3 || !PartValue(parts[0], "field", &decl) ||
      !PartValue(parts[1], "offset", &offset) || !PartValue(parts[2], "size", &size)) {
    return absl::InvalidArgumentError("expected \"field:TYPE NAME; offset:N; size:N;\"");
  }
  TracepointField f;
  if (!absl::SimpleAtoi(offset, &f.offset) || !absl::SimpleAtoi(size, &f.size)) {
    return absl::InvalidArgumentError("offset or size is not a number");
  }
  if (parts.size() > 3 && PartValue(parts[3], "signed", &is_signed)) f.is_signed = is_signed == "1";
  if (absl::Status s = ParseDeclaration(decl, &f); !s.ok()) return s;
  return f;
}

}  // namespace

absl::StatusOr<TracepointFormat> ParseTracepointFormat(std::string_view text) {
  TracepointFormat format;
  bool have_id = false;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_no;
    const absl::string_view t = Trim(line);
    absl::string_view value;
    if (PartValue(t, "name", &value)) {
      format.name = std::string(value);
    } else if (PartValue(t, "ID", &value)) {
      if (!absl::SimpleAtoi(value, &format.id)) {
        return absl::InvalidArgumentError(absl::StrCat("format line ", line_no, ": ID \"", value, "\" is not a number"));
      }
      have_id = true;
    } else if (absl::StartsWith(t, "field:")) {
      absl::StatusOr<TracepointField> f = ParseFieldLine(t);
      if (!f.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("format line ", line_no, " (", t, "): ", f.status().message()));
      }
      (absl::StartsWith(f->name, "common_") ? format.common_fields : format.fields).push_back(*std::move(f));
    } else if (PartValue(t, "print fmt", &value)) {
      format.print_fmt = std::string(value);
    }
  }
  if (!have_id) return absl::InvalidArgumentError("tracepoint format has no \"ID:\" line");
  return format;
}

bool DynamicFieldBytes(const TracepointField& field, ByteView raw, ByteView* data) {
  if (field.size < 4 || field.offset > raw.size() || raw.size() - field.offset < 4) return false;
  const uint32_t loc = LoadUnaligned<uint32_t>(raw.data() + field.offset);
  uint64_t offset = loc & 0xffff;
  const uint64_t len = loc >> 16;
  if (field.relative) offset += field.offset + field.size;
  if (offset > raw.size() || len > raw.size() - offset) return false;
  *data = raw.subspan(offset, len);
  return true;
}

}  // namespace perfring
