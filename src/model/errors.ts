/**
 * An error the user can fix: bad policy, bad sysfs, bad flag. The CLI prints its message as a single
 * line and exits with `exitCode`; no stack trace. Messages say where (file, line:column, field),
 * what was found, and what is expected.
 */
export class UserError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = 'UserError';
    this.exitCode = exitCode;
  }
}

/**
 * Several independent failures of one input (a policy with five mistakes): each is its own line,
 * `lines`, so one run names them all; `message` holds them one a line.
 */
export class UserErrors extends UserError {
  constructor(
    readonly lines: readonly string[],
    exitCode = 1,
  ) {
    super(lines.join('\n'), exitCode);
    this.name = 'UserErrors';
  }
}

/** Collapse any message to one line: our error contract is one line per failure. */
export function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, '; ').trim();
}
