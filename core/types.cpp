#include "core/types.h"

#include <stdexcept>

namespace kb {

const char* dtype_name(DType d) {
  switch (d) {
    case DType::bf16:
      return "bfloat16";
    case DType::f16:
      return "float16";
    case DType::f32:
      return "float32";
    case DType::i8:
      return "int8";
    case DType::fp8_e4m3:
      return "fp8_e4m3";
  }
  return "unknown";
}

int dtype_size(DType d) {
  switch (d) {
    case DType::bf16:
    case DType::f16:
      return 2;
    case DType::f32:
      return 4;
    case DType::i8:
    case DType::fp8_e4m3:
      return 1;
  }
  return 0;
}

void Shape::set(const std::string& key, int64_t value) {
  for (auto& kv : kv_)
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  kv_.emplace_back(key, value);
}

bool Shape::has(const std::string& key) const {
  for (const auto& kv : kv_)
    if (kv.first == key) return true;
  return false;
}

int64_t Shape::operator[](const std::string& key) const {
  for (const auto& kv : kv_)
    if (kv.first == key) return kv.second;
  throw std::out_of_range("shape " + str() + " has no axis '" + key + "'");
}

void Shape::set_label(const std::string& key, std::string value) {
  for (auto& kv : labels_)
    if (kv.first == key) {
      kv.second = std::move(value);
      return;
    }
  labels_.emplace_back(key, std::move(value));
}

std::string Shape::str() const {
  std::string s;
  for (const auto& kv : kv_) {
    if (!s.empty()) s += ';';
    s += kv.first + "=" + std::to_string(kv.second);
  }
  for (const auto& kv : labels_) {
    if (!s.empty()) s += ';';
    s += kv.first + "=" + kv.second;
  }
  return s;
}

}  // namespace kb
