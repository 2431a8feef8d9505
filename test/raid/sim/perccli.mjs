#!/usr/bin/env node
// perccli speaks storcli's syntax (raid-cli.md §3.1, §3.7).
process.env.RAID_SIM_FAMILY = 'perccli';
await import('./storcli.mjs');
