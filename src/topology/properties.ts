// Java properties files (Kafka's server.properties), read the way java.util.Properties.load reads
// them, so isolate sees the log directories the broker sees: `#`/`!` comments, `=`, `:` or blanks
// between key and value, backslash line continuations and escapes, the last of a repeated key wins.

const BLANK = new Set([' ', '\t', '\f']);

/** Logical lines: natural lines joined where one ends in an odd number of backslashes. */
function logicalLines(text: string): string[] {
  const out: string[] = [];
  let pending: string | null = null;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    let line = raw;
    let i = 0;
    while (i < line.length && BLANK.has(line[i]!)) i++;
    line = line.slice(i);
    if (pending === null && (line === '' || line[0] === '#' || line[0] === '!')) continue;
    let slashes = 0;
    for (let j = line.length - 1; j >= 0 && line[j] === '\\'; j--) slashes++;
    const joined: string = (pending ?? '') + (slashes % 2 === 1 ? line.slice(0, -1) : line);
    if (slashes % 2 === 1) pending = joined;
    else {
      out.push(joined);
      pending = null;
    }
  }
  if (pending !== null) out.push(pending);
  return out;
}

function unescapeJava(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== '\\' || i === s.length - 1) {
      out += c;
      continue;
    }
    const n = s[++i]!;
    if (n === 't') out += '\t';
    else if (n === 'n') out += '\n';
    else if (n === 'r') out += '\r';
    else if (n === 'f') out += '\f';
    else if (n === 'u' && /^[0-9a-fA-F]{4}$/.test(s.slice(i + 1, i + 5))) {
      out += String.fromCharCode(Number.parseInt(s.slice(i + 1, i + 5), 16));
      i += 4;
    } else out += n;
  }
  return out;
}

/** Every key and value of a properties file's text. */
export function parseProperties(text: string): Map<string, string> {
  const props = new Map<string, string>();
  for (const line of logicalLines(text)) {
    let i = 0;
    let key = '';
    for (; i < line.length; i++) {
      const c = line[i]!;
      if (c === '\\' && i + 1 < line.length) {
        key += line.slice(i, i + 2);
        i++;
        continue;
      }
      if (c === '=' || c === ':' || BLANK.has(c)) break;
      key += c;
    }
    while (i < line.length && BLANK.has(line[i]!)) i++;
    if (line[i] === '=' || line[i] === ':') i++;
    while (i < line.length && BLANK.has(line[i]!)) i++;
    props.set(unescapeJava(key), unescapeJava(line.slice(i)));
  }
  return props;
}

/** Kafka's default when neither log.dirs nor log.dir is set (KafkaConfig's LogDirDefault). */
export const KAFKA_DEFAULT_LOG_DIR = '/tmp/kafka-logs';

/**
 * The broker's log directories: `log.dirs` (comma-separated), else `log.dir`, as Kafka picks them;
 * `defaulted` when neither is set and the broker falls back to /tmp/kafka-logs.
 */
export function kafkaLogDirs(props: Map<string, string>): {
  dirs: string[];
  key: string;
  defaulted: boolean;
} {
  for (const key of ['log.dirs', 'log.dir']) {
    const value = props.get(key);
    if (value === undefined) continue;
    const dirs = value
      .split(',')
      .map((d) => d.trim())
      .filter((d) => d !== '');
    return { dirs, key, defaulted: false };
  }
  return { dirs: [KAFKA_DEFAULT_LOG_DIR], key: 'log.dir', defaulted: true };
}
