// Entry point of the `isolate` command (dist/cli.js). The packaged executable starts from src/cli/sea.ts.
import { main } from './cli/program.js';

main(process.argv);
