/** CPFs for tests (docs/rules.md#identity-verification). */

/** A valid CPF (11 digits) starting with the 9 digits given: the two check digits computed. */
export const cpfOf = (nine: string): string => {
  const digits = Array.from(nine, Number)
  for (const length of [9, 10]) {
    const sum = digits.slice(0, length).reduce((total, digit, i) => total + digit * (length + 1 - i), 0)
    const remainder = sum % 11
    digits.push(remainder < 2 ? 0 : 11 - remainder)
  }
  return digits.join("")
}

/** `123.456.789-09` */
export const formatted = (cpf: string) => `${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}`
