// Entry point of the `isolate` command: dist/cli.js, and the packaged executable (scripts/sea-launcher.cjs).
import { main } from './cli/program.js';

main(process.argv);
