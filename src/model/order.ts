// Orderings that do not depend on the host's locale. Plans and reports must sort the same on every
// host, and the first use of ICU's collation (`localeCompare`) maps ~5 MB of its data into the
// agent's resident memory for good.

/** Code-point order. */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `host2` before `host10`: runs of digits compare as numbers, the rest by code point. */
export function byNatural(a: string, b: string): number {
  const ra = a.match(/\d+|\D+/g) ?? [];
  const rb = b.match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(ra.length, rb.length); i++) {
    const x = ra[i]!;
    const y = rb[i]!;
    if (x === y) continue;
    const dx = x.charCodeAt(0) <= 57 && x.charCodeAt(0) >= 48;
    const dy = y.charCodeAt(0) <= 57 && y.charCodeAt(0) >= 48;
    if (dx && dy) return Number(x) - Number(y) || x.length - y.length;
    return byText(x, y);
  }
  return ra.length - rb.length;
}
