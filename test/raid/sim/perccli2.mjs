#!/usr/bin/env node
// perccli2 (storcli2 family): same JSON envelope, different schema (raid-cli.md §3.6). Only reads are
// modelled; its set syntax is not known (§10).
process.env.RAID_SIM_FAMILY = 'perccli2';
await import('./storcli.mjs');
