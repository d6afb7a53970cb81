// Luhn (mod-10) checksum used by payment card numbers.

/** True when the digit string passes the Luhn check. Non-digits make it false. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** The check digit that makes `payload + digit` pass Luhn. */
export function luhnCheckDigit(payload: string): string {
  for (let d = 0; d <= 9; d++) {
    if (luhnValid(payload + d)) return String(d);
  }
  throw new Error("unreachable: some digit always completes a Luhn payload");
}
