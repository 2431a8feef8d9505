// `isolate raid parse`: saved outputs of one tool family → the same model and findings as a live
// read, without running anything.
import { parseArcconf } from './arcconf/parse.js';
import { parseMegacli } from './megacli/parse.js';
import type { ParsedOutput, ParseTool } from '../model/raid.js';
import { assess } from '../model/raid-safety.js';
import { parseSsacli } from './ssacli/parse.js';
import { parseStorcli } from './storcli/parse.js';

export interface SavedOutput {
  text: string;
  source: string;
}

export function parseSaved(tool: ParseTool, outputs: SavedOutput[]): ParsedOutput {
  const parsed = parseRaw(tool, outputs);
  for (const c of parsed.controllers) assess(c);
  return parsed;
}

function parseRaw(tool: ParseTool, outputs: SavedOutput[]): ParsedOutput {
  switch (tool) {
    case 'storcli':
    case 'perccli':
      return parseStorcli(outputs, tool);
    case 'megacli':
      return parseMegacli(outputs);
    case 'ssacli':
      return parseSsacli(outputs);
    case 'arcconf':
      return parseArcconf(outputs);
  }
}
