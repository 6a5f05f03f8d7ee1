/** The part of `geoip-country` (which ships no types) that GeoRegion uses. */
declare module "geoip-country" {
  interface Lookup {
    readonly country: string
  }
  const geoip: { lookup(ip: string): Lookup | null }
  export default geoip
}
