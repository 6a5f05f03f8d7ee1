/**
 * PIX "copia e cola" payloads: the EMV QR Code (Merchant Presented Mode) that Brazil's Central Bank
 * specifies for PIX (the "BR Code"), ending with its CRC16-CCITT checksum. Banking apps refuse a
 * payload whose checksum does not match, so the sandbox gateway builds real ones.
 */

/** One EMV field: two-digit id, two-digit length, value. */
const field = (id: string, value: string) => `${id}${value.length.toString().padStart(2, "0")}${value}`

/** CRC16-CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), as four upper-case hex digits. */
export const crc16 = (payload: string): string => {
  let crc = 0xffff
  for (const byte of Buffer.from(payload, "utf8")) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    }
  }
  return crc.toString(16).toUpperCase().padStart(4, "0")
}

/** Upper-case ASCII without accents, as the BR Code's name and city fields require. */
const plain = (text: string, max: number) =>
  text.normalize("NFD").replace(/[^\x20-\x7e]/g, "").toUpperCase().slice(0, max)

interface BrCodeInput {
  /** Where the payer's bank fetches the charge (dynamic PIX), without the scheme. */
  readonly location: string
  readonly amountCents: bigint
  readonly merchantName: string
  readonly merchantCity: string
  /** Transaction id: up to 25 letters and digits. */
  readonly txid: string
}

/** A dynamic PIX BR Code with its CRC. */
export const brCode = (input: BrCodeInput): string => {
  const cents = input.amountCents.toString().padStart(3, "0")
  const amount = `${cents.slice(0, -2)}.${cents.slice(-2)}`
  const body = [
    field("00", "01"),
    field("01", "12"),
    field("26", field("00", "br.gov.bcb.pix") + field("25", input.location.slice(0, 77))),
    field("52", "0000"),
    field("53", "986"),
    field("54", amount),
    field("58", "BR"),
    field("59", plain(input.merchantName, 25)),
    field("60", plain(input.merchantCity, 15)),
    field("62", field("05", input.txid.replace(/[^A-Za-z0-9]/g, "").slice(0, 25)))
  ].join("") + "6304"
  return body + crc16(body)
}
