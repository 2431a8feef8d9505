// The JVM options drop-in (policy `jvm: { activeProcessorCount: auto }`): isolate appends
// -XX:ActiveProcessorCount=N to the variable the unit's launcher reads JVM options from, merged with
// the unit's own value, in a drop-in file of its own. The change's value is `NAME=VALUE` (the variable's
// whole assignment), `''` while the unit does not set the variable. Pure: the planner, the executor
// and saved plans read it alike.

/** The setting of a systemd change that carries the JVM options drop-in. */
export const JVM_OPTIONS_SETTING = 'JvmOptions';

/** One flag isolate owns in the variable; every other word is the operator's and stays as written. */
const APC = /^-XX:ActiveProcessorCount=-?\d+$/;

/** Where isolate's JVM options drop-in lives. `50-` as the Slice= drop-in: an operator's later file wins. */
export function jvmDropInPath(unit: string): string {
  return `/etc/systemd/system/${unit}.d/50-isolate-jvm.conf`;
}

/**
 * The variable's value with isolate's flag for `cpus` CPUs: the operator's words as they are, an
 * -XX:ActiveProcessorCount already there (isolate's, from an earlier allocation) replaced, the flag
 * last (the JVM reads its flags in order, later wins).
 */
export function withActiveProcessorCount(value: string, cpus: number): string {
  const words = value.split(/[ \t]+/).filter((w) => w !== '' && !APC.test(w));
  return [...words, `-XX:ActiveProcessorCount=${cpus}`].join(' ');
}

/** `NAME=VALUE` → [NAME, VALUE]; null for anything else. */
export function splitAssignment(assignment: string): [string, string] | null {
  const i = assignment.indexOf('=');
  if (i < 1) return null;
  return [assignment.slice(0, i), assignment.slice(i + 1)];
}

/**
 * `systemctl show -p Environment` as systemd prints it (shell_maybe_quote of each assignment): words
 * separated by spaces; a word with a space or a shell character is in double quotes with `"`, `\`,
 * `` ` `` and `$` escaped by a backslash. Returns the assignments in order (a later one of a name wins
 * when the unit starts); null when the text does not parse (an unterminated quote).
 */
export function parseEnvironmentProperty(text: string): string[] | null {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    while (text[i] === ' ') i++;
    if (i >= text.length) break;
    let word = '';
    while (i < text.length && text[i] !== ' ') {
      if (text[i] === '"') {
        i++;
        while (i < text.length && text[i] !== '"') {
          if (text[i] === '\\' && i + 1 < text.length) i++;
          word += text[i];
          i++;
        }
        if (i >= text.length) return null;
        i++;
      } else {
        word += text[i];
        i++;
      }
    }
    out.push(word);
  }
  return out;
}

/** The variable's assignment (`NAME=VALUE`, the last one of that name), `''` when the unit sets none; null when unreadable. */
export function assignmentOf(environment: string | undefined, name: string): string | null {
  const list = parseEnvironmentProperty(environment ?? '');
  if (list === null) return null;
  let found = '';
  for (const a of list) if (splitAssignment(a)?.[0] === name) found = a;
  return found;
}

/** Why a value cannot go into a drop-in's Environment= line, or null: one line of text. */
export function unwritableValue(value: string): string | null {
  return /[\x00-\x1f\x7f]/.test(value) ? 'it holds a control character (a newline?)' : null;
}

/**
 * The drop-in's text. Environment= is read with C unescaping inside double quotes and with `%`
 * specifiers expanded (systemd.unit(5)), so `\`, `"` and `%` are escaped; `$` is literal there.
 */
export function jvmDropInText(unit: string, assignment: string, cpus: number): string {
  const quoted = assignment.replace(/[\\"]/g, (c) => `\\${c}`).replace(/%/g, '%%');
  return `# Written by isolate (jvm.activeProcessorCount: auto): the JVM of ${unit} sizes its GC and JIT
# pools for the ${cpus} CPUs isolate gives it. Removed by "isolate rollback". Takes effect at the
# unit's next restart.
[Service]
Environment="${quoted}"
`;
}

/** The CPU count a JvmOptions value carries (`…-XX:ActiveProcessorCount=N`), for messages. */
export function cpusIn(assignment: string): number | null {
  const m = /-XX:ActiveProcessorCount=(\d+)$/.exec(assignment);
  return m ? Number(m[1]) : null;
}
