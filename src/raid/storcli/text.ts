// storcli prints the same data as text when `J` is not given (../shared/fixtures/raid/storcli/
// storcli-check-text-*.txt). This decoder rebuilds the JSON shape from it so one mapper reads both:
// each "Controller = N / Status = ..." header becomes a Controllers[] entry, each "Name :" + "===="
// section becomes a Response Data key, `k = v` lines become properties and dashed tables become rows.

type Json = Record<string, unknown>;

/**
 * Columns that may contain spaces or are right-aligned ("465.25 GB", "48 hours +"): table cells are
 * only mapped left of the first such column, where whitespace splitting is exact.
 */
const FREE_COLUMNS = new Set(['Size', 'Name', 'RetentionTime', 'Next', 'Time']);

export function storcliTextToJson(input: string): Json {
  const lines = input.replace(/\r/g, '').split('\n');
  const controllers: Json[] = [];
  let current: { status: Json; data: Json } | null = null;
  let section: string | null = null;
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? '';
    const next = lines[i + 1] ?? '';
    // Command header: "Controller = 0" directly followed by "Status = ...".
    const head = /^Controller = (\S+)\s*$/.exec(line);
    if (head && /^Status = /.test(next)) {
      current = { status: { Controller: head[1] }, data: {} };
      controllers.push({ 'Command Status': current.status, 'Response Data': current.data });
      section = null;
      i++;
      continue;
    }
    if (!current) {
      i++;
      continue;
    }
    // Section title: "VD LIST :" then a line of '='.
    const title = /^(\S.*?)\s*:\s*$/.exec(line);
    if (title && /^=+\s*$/.test(next)) {
      section = title[1] ?? null;
      i += 2;
      continue;
    }
    // Table: dashes, header, dashes, rows..., dashes.
    if (/^-{5,}\s*$/.test(line) && /^-{5,}\s*$/.test(lines[i + 2] ?? '')) {
      const header = (lines[i + 1] ?? '').trim().split(/\s+/);
      const rows: Json[] = [];
      i += 3;
      while (i < lines.length && !/^-{5,}\s*$/.test(lines[i] ?? '')) {
        const raw = (lines[i] ?? '').trim();
        if (raw !== '') rows.push(tableRow(header, raw.split(/\s+/)));
        i++;
      }
      i++;
      storeTable(current, section, rows);
      continue;
    }
    const kv = /^(\S[^=]*?)\s*=\s*(.*?)\s*$/.exec(line);
    if (kv) storeValue(current, section, kv[1] as string, kv[2] as string);
    i++;
  }
  return { Controllers: controllers };
}

function tableRow(header: string[], cells: string[]): Json {
  const row: Json = {};
  for (let c = 0; c < header.length && c < cells.length; c++) {
    const name = header[c] as string;
    if (FREE_COLUMNS.has(name)) break;
    // The last column takes the rest of the line ("ErrMsg": "command invalid").
    row[name] = c === header.length - 1 ? cells.slice(c).join(' ') : cells[c];
  }
  return row;
}

function storeTable(current: { status: Json; data: Json }, section: string | null, rows: Json[]): void {
  if (section === 'Detailed Status') {
    current.status['Detailed Status'] = rows;
    return;
  }
  const key = section ?? 'Table';
  const existing = current.data[key];
  if (existing === undefined) current.data[key] = rows;
  else if (existing && typeof existing === 'object' && !Array.isArray(existing)) {
    (existing as Json)[`${key} Table`] = rows;
  }
}

function storeValue(
  current: { status: Json; data: Json },
  section: string | null,
  key: string,
  value: string,
) {
  if (section === null) {
    current.status[key] = value;
    return;
  }
  const target = current.data[section];
  if (target === undefined) current.data[section] = { [key]: value };
  else if (typeof target === 'object' && target !== null && !Array.isArray(target)) {
    (target as Json)[key] = value;
  } else {
    // Counters such as "Virtual Drives = 1" follow a table section; keep them top-level.
    current.data[key] = value;
  }
}
