// The weather system's replicated fields as the state codec's "weather" blob: every
// kWeatherFields entry in table order.
#include "sim/core/internal/format.h"
#include "sim/core/state_bytes.h"
#include "sim/systems/weather.h"

namespace loam::sim {

void encodeWeather(const WeatherState& weather, std::vector<std::uint8_t>& out) {
  ByteWriter w(out);
  w.u8(kStateCodecVersion);
  for (const WeatherField& f : kWeatherFields) w.un(static_cast<std::uint64_t>(f.get(weather)), (f.bits + 7) / 8);
}

Result<void> decodeWeather(std::span<const std::uint8_t> bytes, WeatherState& weather) {
  ByteReader r(bytes, "weather");
  r.version();
  WeatherState w = weather;
  for (const WeatherField& f : kWeatherFields) {
    const std::uint64_t raw = r.un((f.bits + 7) / 8);
    if (!r.ok()) break;
    if (f.bits < 64 && raw >> f.bits) {
      r.fail(internal::format("%s: %llu does not fit %u bits", f.name, static_cast<unsigned long long>(raw), unsigned{f.bits}));
    }
    f.set(w, static_cast<std::int64_t>(raw));
  }
  if (r.ok() && (w.rain > 1000 || w.wetness > 1000)) r.fail("rain or wetness above 1000");
  if (r.ok() && w.dayLength == 0) r.fail("day length 0");
  if (r.ok() && w.timeOrigin >= w.dayLength) r.fail("time origin past the day length");
  if (Result<void> e = r.finish(); !e) return e;
  weather = w;
  return {};
}

}  // namespace loam::sim
