// The decode experiments' own metrics (llama_decode.cu), from the counts
// their Work declares for one run(): "tokens" generated and "kv_bytes" of
// KV cache the attentions read. CUDA-free, so that the CPU tests pin them.
#pragma once

#include <algorithm>
#include <optional>

#include "core/roofline.h"

namespace kb::decode_metrics {

inline std::optional<double> tokens_per_second(const MetricInput& in) {
  return in.work.counts.at("tokens") / in.t_s;
}

inline std::optional<double> us_per_token(const MetricInput& in) {
  return in.t_s * 1e6 / std::max(in.work.counts.at("tokens"), 1.0);
}

inline std::optional<double> with_kv_per_second(const MetricInput& in) {
  return (in.work.bytes + in.work.counts.at("kv_bytes")) / in.t_s / 1e9;
}

// The weights and the KV cache, both read: what bounds the bandwidth of both.
inline Work with_kv(const Work& w) {
  Work r = w;
  r.bytes += w.counts.at("kv_bytes");
  if (r.write_bytes < 0) r.write_bytes = writes_of(w);
  return r;
}

inline constexpr Metric kTokenPerSec{"token_per_sec", &tokens_per_second};
inline constexpr Metric kLatencyPerToken{"latency(us)", &us_per_token};
inline constexpr Metric kMemoryBandwidthKv =
    Metric("memory_bandwidth_kv(GB/s)", &with_kv_per_second).bounded_by(&with_kv);

}  // namespace kb::decode_metrics
