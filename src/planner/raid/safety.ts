// The RAID safety judgement lives in model/raid-safety.ts, where the RAID backend may import it too
// (a backend never imports the planner). This name is kept for the CLI's renderer.
export { assess, controllerBlock, type SafetyVerdict, writeBackVerdict } from '../../model/raid-safety.js';
