// The JVM options drop-in (policy `jvm: { activeProcessorCount: auto }`): isolate sets
// JAVA_TOOL_OPTIONS=-XX:ActiveProcessorCount=N in a drop-in file of its own. The change's value is
// `JAVA_TOOL_OPTIONS=...` (the variable's whole assignment), `''` while the unit does not set it.
// Pure: the planner, the executor and saved plans read it alike.
//
// Why JAVA_TOOL_OPTIONS and not the operator's variable (KAFKA_OPTS): Environment= assignments of one
// name replace each other, the last file winning, so a drop-in that set KAFKA_OPTS had to copy the
// operator's value, and that copy then overrode the unit's own assignment: an edit of KAFKA_OPTS made
// later (heap, a JMX agent, a package upgrade) was lost at the next restart, and systemd showed only
// isolate's copy. The JVM itself reads JAVA_TOOL_OPTIONS (every JVM from JDK 5, whatever launcher
// starts it) before its command line, so an -XX:ActiveProcessorCount the operator puts on the command
// line still wins, and nothing of the operator's is copied. A unit that sets JAVA_TOOL_OPTIONS itself
// is left alone (the planner warns): isolate would have to copy it.
/** The setting of a systemd change that carries the JVM options drop-in. */
export const JVM_OPTIONS_SETTING = 'JvmOptions';

/** The variable isolate's drop-in sets: read by the JVM itself, before its command line. */
export const JVM_FLAG_VARIABLE = 'JAVA_TOOL_OPTIONS';

/** One flag isolate owns in the variable; every other word is the operator's and stays as written. */
const APC = /^-XX:ActiveProcessorCount=-?\d+$/;

/** isolate's whole value of JAVA_TOOL_OPTIONS for `cpus` CPUs. */
export function isolateJvmAssignment(cpus: number): string {
  return `${JVM_FLAG_VARIABLE}=-XX:ActiveProcessorCount=${cpus}`;
}

/** A value of JAVA_TOOL_OPTIONS that is isolate's own (its drop-in's, for some CPU count). */
export function isIsolateJvmValue(value: string): boolean {
  return /^-XX:ActiveProcessorCount=\d+$/.test(value);
}

/** The -XX:ActiveProcessorCount a value sets (the last one), or null. */
export function activeProcessorCountIn(value: string): number | null {
  const words = value.split(/[ \t]+/).filter((w) => APC.test(w));
  const last = words.at(-1);
  return last === undefined ? null : Number(last.slice(last.indexOf('=') + 1));
}

/** Where isolate's JVM options drop-in lives. `50-` as the Slice= drop-in: an operator's later file wins. */
export function jvmDropInPath(unit: string): string {
  return `/etc/systemd/system/${unit}.d/50-isolate-jvm.conf`;
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
