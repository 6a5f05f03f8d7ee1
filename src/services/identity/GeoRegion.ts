/**
 * The region of an IP address (docs/rules.md#suspicious-ip-change): its country, from the GeoLite2 country
 * database shipped inside the `geoip-country` package (no network at run time). Loopback, private and unknown
 * addresses have no region.
 */
import geoip from "geoip-country"

export const regionOf = (ip: string): string | undefined => {
  const address = ip.replace(/^::ffff:/i, "")
  return geoip.lookup(address)?.country || undefined
}
