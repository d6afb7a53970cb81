// US Social Security Number invalidation rules (Presidio's list plus the 9xx ITIN/unused area).

/** True when the nine SSN digits can belong to a real, issued-format SSN. */
export function ssnPlausible(area: string, group: string, serial: string): boolean {
  if (area === "000" || area === "666" || area.charCodeAt(0) === 57 /* '9' */) return false;
  if (group === "00" || serial === "0000") return false;
  const all = area + group + serial;
  if (/^(\d)\1{8}$/.test(all)) return false;
  if (all === "123456789" || all.startsWith("98765432") || all === "078051120" || all === "219099999") return false;
  return true;
}
