// Expected values for every vendor capture, written by reading each capture (the line quoted in the
// comment), not by running the parser. `raid-fixtures.test.ts` checks the parser against them and
// checks that no capture is left out.
import type { ParseTool, Protection, WritePolicy } from '../../src/model/raid.js';

/** [target, currentWrite, defaultWrite, writeBackIfBadBattery] */
export type DriveRow = [string, WritePolicy, WritePolicy, boolean | null];

export interface ExpectedController {
  id: string;
  model?: string | null;
  healthy?: boolean | null;
  mode?: 'raid' | 'hba' | 'mixed' | null;
  readOnly?: boolean;
  protection?: Partial<Protection>;
  drives: DriveRow[];
  safe: boolean;
  /** The capture shows an unsafe state `raid check` must call CRITICAL. */
  critical: boolean;
  /** [name, raidLevel, state] per logical drive, in the order of `drives`, where checked. */
  driveFacts?: [string | null, string | null, string | null][];
}

export interface Expected {
  file: string;
  tool: ParseTool;
  controllers: ExpectedController[];
  /** A host-level finding the capture must produce (no controller, error line, bad output). */
  host?: RegExp;
}

const OPTIMAL_BBU: Partial<Protection> = { kind: 'bbu', present: true, state: 'Optimal', healthy: true };
/**
 * A storcli/perccli `show all` embeds only the BBU's state word; its fault flags are in `/cN/bbu show
 * all`, so the unit is not judged from that one word (issue 8): unknown, never healthy.
 */
const SHOW_ALL_BBU: Partial<Protection> = {
  kind: 'bbu',
  present: true,
  state: 'Optimal',
  healthy: null,
  condition: 'unknown',
};

export const EXPECTED: Expected[] = [
  // ---------------------------------------------------------------- storcli (JSON)
  {
    // "BBU_Info": [{"Model": "iBBU08", "State": "Optimal", ... "Next Learn": "2024/04/18  18:32:56"}],
    // "BBU Status": 0, VD LIST "Cache": "RWBD", TOPOLOGY DG 0 "PDC": "dsbl".
    file: 'storcli/netdata-megaraid-controllers-info.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        model: 'ServeRAID M5015 SAS/SATA Controller',
        healthy: true,
        protection: {
          ...SHOW_ALL_BBU,
          charging: false,
          learnActive: false,
          nextLearn: '2024/04/18  18:32:56',
        },
        drives: [['storcli:/c0/v0', 'write-back', 'unknown', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // Per-drive detail only ("Drive /c0/e252/s0" ...): no VD, no battery data.
    file: 'storcli/netdata-megaraid-drives-info.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        protection: { kind: null, present: null },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // HBA 9500-8i, "Driver Name": "mpt3sas", "Controller Status": "OK", "On Board Memory Size": "0MB", no VD LIST.
    file: 'storcli/netdata-mpt3sas-controllers-info.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        model: 'HBA 9500-8i',
        mode: 'hba',
        healthy: true,
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Energy Pack": "Absent", "Energy Pack Status": "NA", VD 0/239 "Cache": "NRWTD", "Current Personality": "JBOD-Mode ".
    file: 'storcli/phe-cALL_show_all-MR216i-no-cache-NRWTD.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        model: 'HPE MR216i-a Gen10+',
        mode: 'mixed',
        protection: { kind: 'none', present: false, healthy: false },
        drives: [['storcli:/c0/v239', 'write-through', 'unknown', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // System Overview: Ctl 0, Model "HPEMR216i-aGen10+", "BBU": "N/A", "Hlth": "Opt".
    file: 'storcli/phe-show_all-system-overview.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        healthy: true,
        protection: { present: false, kind: 'none' },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Controller Count": 1 only.
    file: 'storcli/phe-show_ctrlcount.json',
    tool: 'storcli',
    controllers: [],
  },
  {
    // Two System Overview rows, both "BBU": "N/A", "Hlth": "Opt".
    file: 'storcli/pystorcli2-show_J-two-controllers.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        healthy: true,
        protection: { present: false },
        drives: [],
        safe: false,
        critical: false,
      },
      {
        id: 'storcli:/c1',
        healthy: true,
        protection: { present: false },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "/c0 show": VD LIST "DG/VD": "2/1", "Cache": "RWTD"; no BBU keys at all.
    file: 'storcli/pystorcli2-c0_show_J-RS3DC080-no-bbu-RWTD.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        model: 'Intel(R) RAID Controller RS3DC080',
        protection: { kind: null, present: null },
        drives: [['storcli:/c0/v1', 'write-through', 'unknown', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Status": "Failure", ErrCd 59 "Incomplete foreign configuration", yet full Response Data.
    file: 'storcli/pystorcli2-c0_show_J-failure-errcd59-with-data.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        drives: [['storcli:/c0/v1', 'write-through', 'unknown', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // set verdict: "Status": "Failure", "ErrMsg": "Operation not allowed.", no Response Data.
    file: 'storcli/pystorcli2-set_good-failure-errcd255.json',
    tool: 'storcli',
    controllers: [],
    host: /Operation not allowed/,
  },
  {
    // "Description": "Delete VD succeeded": a verdict, no data.
    file: 'storcli/pystorcli2-v1_del_J-success.json',
    tool: 'storcli',
    controllers: [],
  },
  {
    // "/c0/v0": "Cache": "RWBD"; "VD0 Properties": "Write Cache(initial setting)": "WriteBack".
    file: 'storcli/puppet-c0_v0_show_all-nvme-raid10-RWBD.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        drives: [['storcli:/c0/v0', 'write-back', 'write-back', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Cachevault_Info": [{"Model": "CVPM02", "State": "Optimal"}], "BBU Status": 0, VD "Cache": "RWBD".
    // `show all` does not print "Replacement required", so CacheVault health stays unknown here.
    file: 'storcli/megaraid-dashboard-c0_show_all-9270CV.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        model: 'LSI MegaRAID SAS 9270CV-8i',
        protection: { kind: 'cachevault', present: true, state: 'Optimal', healthy: null, charging: false },
        drives: [['storcli:/c0/v0', 'write-back', 'unknown', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // `/c0/bbu show all` → "ErrMsg": "use /cx/cv": a CacheVault card, not "no battery".
    file: 'storcli/megaraid-dashboard-bbu_show_all-failure-use-cv.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        protection: { kind: 'cachevault', present: null },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "State": "Optimal", "Replacement required": "No", "Next Learn time": "2026/05/09  20:21:41 (831673301 seconds)".
    file: 'storcli/megaraid-dashboard-cv_show_all-optimal-transparent-learn.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        protection: {
          kind: 'cachevault',
          present: true,
          state: 'Optimal',
          healthy: true,
          replacementRequired: false,
          learnActive: false,
          nextLearn: '2026/05/09  20:21:41 (831673301 seconds)',
        },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "/c0/v0": "Cache": "RWBD", "Write Cache(initial setting)": "WriteBack", "Active Operations": "Consistency Check (36%)".
    file: 'storcli/megaraid-dashboard-vall_show_all-RWBD-cc-running.json',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        drives: [['storcli:/c0/v0', 'write-back', 'write-back', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  // ---------------------------------------------------------------- storcli (text)
  {
    // ctrl 0: BBU_Info "iBBU-09 Optimal", no VD LIST; ctrl 1: "BBU = Absent", VD "NRWTD";
    // ctrl 2: Cachevault_Info "CVPM02 Optimal", VD "RWBD".
    file: 'storcli/storcli-check-text-3ctrl-cv-bbu-nobbu.txt',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        protection: { ...SHOW_ALL_BBU, charging: false },
        drives: [],
        safe: false,
        critical: false,
      },
      {
        id: 'storcli:/c1',
        model: 'LSI MegaRAID SAS 9240-8i',
        protection: { kind: 'none', present: false },
        drives: [['storcli:/c1/v0', 'write-through', 'unknown', false]],
        safe: false,
        critical: false,
      },
      {
        id: 'storcli:/c2',
        protection: { kind: 'cachevault', state: 'Optimal', healthy: null },
        drives: [['storcli:/c2/v0', 'write-back', 'unknown', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // BBU_Info "iBBU-09 Optimal ... 2015/06/10  21:01:26", "Next Battery Learn = 06/10/2015, 21:00:00".
    file: 'storcli/storcli-check-text-9286CV-ibbu09-next-learn.txt',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        protection: { ...SHOW_ALL_BBU, nextLearn: '06/10/2015, 21:00:00' },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "0/0 RAID1 ... RWBD", Cachevault_Info "CVPM02 Optimal".
    file: 'storcli/storcli-check-text-9361-ssd-RWBD.txt',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        protection: { kind: 'cachevault', state: 'Optimal' },
        drives: [['storcli:/c0/v0', 'write-back', 'unknown', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Status = Failure", ErrCd 2 "command invalid", then full data: VDs 0/0 and 1/1 "RWBD", CVPM02 Optimal.
    file: 'storcli/storcli-check-text-M5110e-cv-partial-failure.txt',
    tool: 'storcli',
    controllers: [
      {
        id: 'storcli:/c0',
        model: 'ServeRAID M5110e',
        protection: { kind: 'cachevault', state: 'Optimal' },
        drives: [
          ['storcli:/c0/v0', 'write-back', 'unknown', false],
          ['storcli:/c0/v1', 'write-back', 'unknown', false],
        ],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // HBA 9400-16i, "Controller Status = OK", no VD LIST, no BBU section.
    file: 'storcli/storcli-check-text-hba9400.txt',
    tool: 'storcli',
    controllers: [
      { id: 'storcli:/c0', model: 'HBA 9400-16i', healthy: true, drives: [], safe: false, critical: false },
    ],
  },
  // ---------------------------------------------------------------- perccli
  {
    // "Status": "Failure", "Description": "No Controller found".
    file: 'perccli/phe-perccli-no-controller.json',
    tool: 'perccli',
    controllers: [],
    host: /No Controller found/,
  },
  {
    file: 'perccli/puppet-perccli-no-controller.json',
    tool: 'perccli',
    controllers: [],
    host: /No Controller found/,
  },
  {
    // BBU_Info "Model": "BBU", "State": "Optimal", "BBU Status": 0, VD 0/239 "Cache": "RWBD".
    file: 'perccli/perccli-status-H755-bbu-optimal.json',
    tool: 'perccli',
    controllers: [
      {
        id: 'perccli:/c0',
        model: 'PERC H755 Front',
        mode: 'raid',
        protection: { ...SHOW_ALL_BBU, charging: false },
        drives: [['perccli:/c0/v239', 'write-back', 'unknown', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "/c0/v239": "Cache": "RWBD"; "VD239 Properties": "Write Cache(initial setting)": "WriteBack".
    file: 'perccli/perccli-status-H755-vall_show_all.json',
    tool: 'perccli',
    controllers: [
      {
        id: 'perccli:/c0',
        drives: [['perccli:/c0/v239', 'write-back', 'write-back', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // perccli2: "Energy Pack Info": [{"Type": "Battery", "Status": "Optimal"}], "CurrentCache": "NR,WB".
    file: 'perccli/perccli2-status-H965i-energy-pack.json',
    tool: 'perccli',
    controllers: [
      {
        id: 'perccli2:/c0',
        model: 'PERC H965i Front',
        readOnly: true,
        protection: { kind: 'bbu', present: true, state: 'Optimal', healthy: null, condition: 'unknown' },
        drives: [['perccli2:/c0/v1', 'write-back', 'write-back', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // perccli2 vall: "CurrentCache": "NR,WB", "DefaultCache": "NR,WB".
    file: 'perccli/perccli2-status-H965i-vall.json',
    tool: 'perccli',
    controllers: [
      {
        id: 'perccli2:/c0',
        readOnly: true,
        drives: [['perccli2:/c0/v1', 'write-back', 'write-back', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // System Overview "Model": "PERCH730PAdapter", "BBU": "Opt", "Hlth": "Opt".
    file: 'perccli/perccli_exporter-show_J-H730P-bbu-opt.json',
    tool: 'perccli',
    controllers: [
      {
        id: 'perccli:/c0',
        healthy: true,
        protection: { state: 'Optimal' },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  // ---------------------------------------------------------------- MegaCli
  {
    // "Battery state: " (empty), "Learn Cycle Active : No", "Battery Replacement required : No", "Charging current: 0 mA".
    file: 'megacli/check_raid-3-bbu-ok.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        protection: {
          kind: 'bbu',
          present: true,
          state: null,
          healthy: null,
          learnActive: false,
          replacementRequired: false,
          charging: false,
        },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Default/Current Cache Policy: WriteBack, ReadAhead, Direct, No Write Cache if Bad BBU".
    file: 'megacli/check_raid-3-ldinfo-WB.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        drives: [['megacli:/a0/l0', 'write-back', 'write-back', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // Default "WriteBack, ReadAheadNone, Cached, No Write Cache if Bad BBU", Current "WriteThrough, ...".
    file: 'megacli/check_raid-issue123-ldinfo-WT-current-cachecade.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        drives: [['megacli:/a0/l0', 'write-through', 'write-back', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Adapter 0: Get BBU Status Failed." / "Exit Code: 0x01" (MegaCli 8.01).
    file: 'megacli/check_raid-issue32-bbu-absent-exit-0x01.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        protection: {
          healthy: null,
          present: null,
          unrecognised: ['Get BBU Status Failed (no reason given)'],
        },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Get BBU Status Failed." + "The required hardware component is not present." / "Exit Code: 0x22".
    file: 'megacli/check_raid-issue32-bbu-absent-exit-0x22.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        protection: { kind: 'none', present: false, healthy: false },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Battery State : Operational", "Fully Charged : No", "Charging current: 512 mA", "Learn Cycle Active : No".
    file: 'megacli/check_raid-issue39-bbu-charging.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        protection: { kind: 'bbu', state: 'Operational', healthy: false, charging: true, learnActive: false },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Battery Replacement required : Yes", "Remaining Capacity Low : Yes".
    file: 'megacli/check_raid-issue39-bbu-replacement-required.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        protection: { kind: 'bbu', replacementRequired: true, healthy: false },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "WriteBack, ReadAdaptive, Cached, Write Cache OK if Bad BBU" = CachedBadBBU.
    file: 'megacli/check_raid-issue39-ldinfo-CachedBadBBU.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        drives: [['megacli:/a0/l0', 'always-write-back', 'always-write-back', true]],
        safe: false,
        critical: true,
      },
    ],
  },
  {
    // "Battery State: Optimal", replacement/about-to-fail/missing all "No", "Charging current: 0 mA".
    file: 'megacli/check_raid-issue45-adpbbucmd-ibbu08-optimal.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        protection: { ...OPTIMAL_BBU, charging: false, learnActive: false, replacementRequired: false },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // Old format "Virtual Disk: 0", Default WriteBack / Current WriteThrough.
    file: 'megacli/check_raid-issue65-ldinfo-old-format-WT.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        drives: [['megacli:/a0/l0', 'write-through', 'write-back', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // 14 virtual drives (0..13), all Default = Current "WriteThrough, ReadAheadNone, Direct, No Write Cache if Bad BBU".
    file: 'megacli/glpi-LDinfo-WT-default.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        drives: Array.from(
          { length: 14 },
          (_, i): DriveRow => [`megacli:/a0/l${i}`, 'write-through', 'write-through', false],
        ),
        safe: false,
        critical: false,
      },
    ],
  },
  // -ShowSummary -aALL: "Controller" (ProductName, Status), "BBU" (BBU Type, Status) only when one is
  // fitted, "Virtual drive : Target Id N ,VD name X" with State and RAID Level. It prints no cache
  // policy and no adapter number: write policy unknown, read only, never changed.
  {
    // "ProductName : PERC H310 Mini(Bus 0, Dev 0)", "Status : Optimal"; Hardware has Controller,
    // Enclosure and PD sections but no BBU section; "Virtual drive : Target Id 0 ,VD name Virtual
    // Disk 0", "State : Optimal", "RAID Level : 0 "; last line "Exit Code: 0x00".
    file: 'megacli/glpi-ShowSummary-H310-mini-no-bbu.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        model: 'PERC H310 Mini',
        healthy: true,
        readOnly: true,
        protection: { kind: 'none', present: false, healthy: false, condition: 'absent' },
        drives: [['megacli:/a0/l0', 'unknown', 'unknown', null]],
        driveFacts: [['Virtual Disk 0', '0', 'Optimal']],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "ProductName : PERC H710P Mini(Bus 0, Dev 0)", "Status : Optimal"; "BBU" section: "BBU Type :
    // BBU", "Status : Healthy" (one word, no fault flags: not judged); "Virtual drive : Target Id 0
    // ,VD name Virtual Disk0", "State : Optimal", "RAID Level : 1 ".
    file: 'megacli/glpi-ShowSummary-H710P-bbu-healthy.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        model: 'PERC H710P Mini',
        healthy: true,
        readOnly: true,
        protection: { kind: 'bbu', present: true, state: 'Healthy', healthy: null, condition: 'unknown' },
        drives: [['megacli:/a0/l0', 'unknown', 'unknown', null]],
        driveFacts: [['Virtual Disk0', '1', 'Optimal']],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "ProductName : PERC H730P Mini(Bus 0, Dev 0)", "Status : Optimal"; "BBU Type : BBU", "Status :
    // Healthy"; two drives: "Target Id 0 ,VD name raid11" and "Target Id 1 ,VD name raid12", both
    // "State : Optimal", "RAID Level : 1 ".
    file: 'megacli/glpi-ShowSummary-H730P-bbu-healthy-2vd.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        model: 'PERC H730P Mini',
        healthy: true,
        readOnly: true,
        protection: { kind: 'bbu', present: true, state: 'Healthy', healthy: null, condition: 'unknown' },
        drives: [
          ['megacli:/a0/l0', 'unknown', 'unknown', null],
          ['megacli:/a0/l1', 'unknown', 'unknown', null],
        ],
        driveFacts: [
          ['raid11', '1', 'Optimal'],
          ['raid12', '1', 'Optimal'],
        ],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Controller Count: 1." / "Exit Code: 0x01" — the count, not an error.
    file: 'megacli/glpi-adpCount-exit-0x01.txt',
    tool: 'megacli',
    controllers: [],
  },
  {
    // "Battery State: Optimal", "Next Learn time: Fri Jan 28 13:07:56 2022", "Charging Status : None".
    file: 'megacli/netdata-AdpBbuCmd-old.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        protection: {
          ...OPTIMAL_BBU,
          charging: false,
          learnActive: false,
          nextLearn: 'Fri Jan 28 13:07:56 2022',
        },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "BatteryType: iBBU08", "Battery State: Optimal", "Next Learn time: Thu Dec 21 18:32:56 2023".
    file: 'megacli/netdata-AdpBbuCmd-recent.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        protection: { ...OPTIMAL_BBU, nextLearn: 'Thu Dec 21 18:32:56 2023' },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Adapter #0" / "Number of Virtual Disks: 0".
    file: 'megacli/netdata-LDPDInfo-no-drives.txt',
    tool: 'megacli',
    controllers: [{ id: 'megacli:/a0', drives: [], safe: false, critical: false }],
  },
  {
    // One VD: "WriteBack, ReadAhead, Direct, No Write Cache if Bad BBU" (both lines), then PD details.
    file: 'megacli/netdata-LDPDInfo.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        drives: [['megacli:/a0/l0', 'write-back', 'write-back', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // PERC 6/i: "BBU : Present", "Memory : Present", Default "Write Policy : WB"; no BBU status in this output.
    file: 'megacli/percona-AdpAllInfo-PERC6i.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        model: 'PERC 6/i Integrated',
        healthy: true,
        protection: { kind: 'bbu', present: true, healthy: null },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "WriteBack, ReadAheadNone, Direct, No Write Cache if Bad BBU".
    file: 'megacli/percona-LdPdInfo.txt',
    tool: 'megacli',
    controllers: [
      {
        id: 'megacli:/a0',
        drives: [['megacli:/a0/l0', 'write-back', 'write-back', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  // ---------------------------------------------------------------- ssacli / hpssacli / hpacucli
  {
    // "Error: The specified device does not have any logical drives."
    file: 'ssacli/check_raid-145-ld-show-no-logical-drives-error.txt',
    tool: 'ssacli',
    controllers: [],
    host: /does not have any logical drives/,
  },
  {
    // "Smart Array P840 in Slot 1 (HBA Mode)" + "Smart HBA H244br in Slot 0 (Embedded) (RAID Mode)".
    file: 'ssacli/check_raid-145-status-hba-mode.txt',
    tool: 'ssacli',
    controllers: [
      { id: 'ssacli:slot=1', mode: 'hba', healthy: true, drives: [], safe: false, critical: false },
      { id: 'ssacli:slot=0', mode: 'raid', healthy: true, drives: [], safe: false, critical: false },
    ],
  },
  {
    // P410i OK/OK/OK; P411 "Cache Status: Not Configured", no battery line.
    file: 'ssacli/check_raid-151-status-cache-not-configured.txt',
    tool: 'ssacli',
    controllers: [
      {
        id: 'ssacli:slot=0',
        protection: { present: true, state: 'OK', healthy: true },
        drives: [],
        safe: true,
        critical: false,
      },
      {
        id: 'ssacli:slot=3',
        protection: { present: null, state: null },
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // P410i "Controller Status: OK", "Cache Status: OK", "Battery/Capacitor Status: OK".
    file: 'ssacli/check_raid-PR94-status-ok.txt',
    tool: 'ssacli',
    controllers: [
      {
        id: 'ssacli:slot=0',
        protection: { state: 'OK', healthy: true, charging: false },
        drives: [],
        safe: true,
        critical: false,
      },
    ],
  },
  {
    // "Dynamic Smart Array B140i in Slot 0b": driver RAID, no cache.
    file: 'ssacli/check_raid-issue139-B140i-dynamic-smart-array.txt',
    tool: 'ssacli',
    controllers: [{ id: 'ssacli:slot=0b', readOnly: true, drives: [], safe: false, critical: false }],
  },
  {
    // Banner, then "Smart Array P400i in Slot 0 (Embedded)" / "logicaldrive 1 (68.3 GB, RAID 1, OK)" (no cache lines).
    file: 'ssacli/check_raid-ld-show-firmware-upgrade-banner.txt',
    tool: 'ssacli',
    controllers: [
      {
        id: 'ssacli:slot=0',
        model: 'Smart Array P400i',
        drives: [['ssacli:slot=0/ld1', 'unknown', 'unknown', null]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Error: No controllers detected."
    file: 'ssacli/check_raid-pr207-no-controllers.txt',
    tool: 'ssacli',
    controllers: [],
    host: /No controllers detected/,
  },
  {
    // "Smart Array P410 in Slot 1" (no arrays) + "Smart Array P410i in Slot 0" with "logicaldrive 1 (2.2 TB, RAID 1+0, OK)".
    file: 'ssacli/glpi-hpacucli-ctrl-all-show-config.txt',
    tool: 'ssacli',
    controllers: [
      { id: 'ssacli:slot=1', model: 'Smart Array P410', drives: [], safe: false, critical: false },
      {
        id: 'ssacli:slot=0',
        model: 'Smart Array P410i',
        drives: [['ssacli:slot=0/ld1', 'unknown', 'unknown', null]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // P212 (slot 5, LD 1) + P410i (slot 0, LDs 1, 2): "Cache Ratio: 100% Read / 0% Write", "No-Battery Write Cache:
    // Disabled", LD "Caching:  Enabled", "Drive Write Cache: Disabled", no battery lines.
    file: 'ssacli/netdata-P212_P410i-config-detail.txt',
    tool: 'ssacli',
    controllers: [
      {
        id: 'ssacli:slot=5',
        model: 'Smart Array P212',
        protection: { state: null, present: null },
        drives: [['ssacli:slot=5/ld1', 'write-through', 'write-back', false]],
        safe: false,
        critical: false,
      },
      {
        id: 'ssacli:slot=0',
        model: 'Smart Array P410i',
        drives: [
          ['ssacli:slot=0/ld1', 'write-through', 'write-back', false],
          ['ssacli:slot=0/ld2', 'write-through', 'write-back', false],
        ],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Cache Status: Temporarily Disabled", "Battery/Capacitor Status: Failed (Replace Batteries)", "Cache Backup Power Source: Batteries".
    file: 'ssacli/netdata-P400i-cache-disabled-battery-failed.txt',
    tool: 'ssacli',
    controllers: [
      {
        id: 'ssacli:slot=0',
        protection: {
          kind: 'bbu',
          present: true,
          state: 'Failed (Replace Batteries)',
          healthy: false,
          replacementRequired: true,
        },
        drives: [['ssacli:slot=0/ld1', 'write-through', 'write-back', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // P408i-a Gen10: "No-Battery Write Cache: Enabled", "Battery/Capacitor Status: OK", LD "Caching:  Enabled",
    // "Configured Drive Write Cache Policy: Enable", "Controller Mode: Mixed".
    file: 'ssacli/netdata-P408i-a-Gen10-smartpqi.txt',
    tool: 'ssacli',
    controllers: [
      {
        id: 'ssacli:slot=0',
        mode: 'mixed',
        protection: { kind: 'bbu', state: 'OK', healthy: true },
        drives: [['ssacli:slot=0/ld1', 'always-write-back', 'always-write-back', true]],
        safe: false,
        critical: true,
      },
    ],
  },
  {
    // P410i + P800, Controller/Cache/Battery all OK.
    file: 'ssacli/percona-hpacucli-show-status-2ctrl.txt',
    tool: 'ssacli',
    controllers: [
      {
        id: 'ssacli:slot=0',
        protection: { state: 'OK', healthy: true },
        drives: [],
        safe: true,
        critical: false,
      },
      {
        id: 'ssacli:slot=1',
        model: 'Smart Array P800',
        protection: { state: 'OK', healthy: true },
        drives: [],
        safe: true,
        critical: false,
      },
    ],
  },
  // ---------------------------------------------------------------- arcconf
  {
    // "Status : Not Installed" (battery), "Write-cache mode : Not supported".
    file: 'arcconf/check_raid-1-getconfig-no-battery-no-wc.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        protection: { kind: 'none', present: false },
        drives: [['arcconf:1/ld0', 'write-through', 'unknown', null]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // Battery "Status : Optimal"; "Write-cache mode : Enabled (write-back)", setting "... when protected by battery".
    file: 'arcconf/check_raid-2-getconfig-AL-battery-optimal.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        model: 'IBM ServeRAID 8k',
        protection: OPTIMAL_BBU,
        drives: [['arcconf:1/ld0', 'write-back', 'write-back', false]],
        safe: true,
        critical: false,
      },
    ],
  },
  {
    // "ZMM Optimal"; "Write-cache setting : Enabled (write-back)" — no "when protected": wb, stays on without ZMM.
    file: 'arcconf/check_raid-3-getconfig-AL-zmm-optimal.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        protection: { kind: 'flash-backed', present: true, state: 'ZMM Optimal', healthy: true },
        drives: [['arcconf:1/ld0', 'always-write-back', 'always-write-back', true]],
        safe: false,
        critical: true,
      },
    ],
  },
  {
    // GETSTATUS: "Logical device : 0", "Current operation : Build/Verify", "Status : In Progress", 11 %.
    file: 'arcconf/check_raid-3-getstatus-task-in-progress.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        drives: [['arcconf:1/ld0', 'unknown', 'unknown', null]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // SmartRAID 3154: "Cache Status : Ok", "No-Battery Write Cache : Disabled", "Backup Power Status : Ok", LDs 0, 1 "Caching : Enabled".
    file: 'arcconf/check_raid-arcconf31000-SmartRAID3154-smartpqi.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        model: 'Adaptec SmartRAID 3154-16i',
        readOnly: true,
        protection: { kind: 'flash-backed', present: true, state: 'Ok', healthy: true },
        drives: [
          ['arcconf:1/ld0', 'write-back', 'write-back', false],
          ['arcconf:1/ld1', 'write-back', 'write-back', false],
        ],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // "Overall Backup Unit Status : Not Present"; "Write-cache setting : Disabled", "Write-cache status : Off".
    file: 'arcconf/check_raid-issue128-backup-not-present-WT.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        healthy: true,
        protection: { kind: 'none', present: false },
        drives: [['arcconf:1/ld0', 'write-through', 'write-through', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // GETSTATUS: "Build/Verify with fix", "In Progress", 90 %.
    file: 'arcconf/check_raid-issue190-getstatus.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        drives: [['arcconf:1/ld0', 'unknown', 'unknown', null]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // AFM-700 "Overall Backup Unit Status : Ready"; LD 0, 1 "Disabled/Off"; LD 2 "Write-cache setting : Enabled", status On.
    file: 'arcconf/check_raid-issue31-afm-ready-mixed-lds.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        protection: { kind: 'supercap', present: true, state: 'Ready', healthy: true },
        drives: [
          ['arcconf:1/ld0', 'write-through', 'write-through', false],
          ['arcconf:1/ld1', 'write-through', 'write-through', false],
          ['arcconf:1/ld2', 'always-write-back', 'always-write-back', true],
        ],
        safe: false,
        critical: true,
      },
    ],
  },
  {
    // "ZMM not installed"; "Write-cache setting : Enabled", "Write-cache status : On" — unprotected write-back.
    file: 'arcconf/check_raid-issue47-zmm-not-installed-WB-on.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        protection: { kind: 'none', present: false },
        drives: [['arcconf:1/ld0', 'always-write-back', 'always-write-back', true]],
        safe: false,
        critical: true,
      },
    ],
  },
  {
    // Battery "Not Installed"; "Write-cache mode/setting : Disabled (write-through)".
    file: 'arcconf/check_raid-issue55-battery-not-installed-WT.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        model: 'Adaptec 5405',
        protection: { present: false },
        drives: [['arcconf:1/ld0', 'write-through', 'write-through', false]],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // LD only, no "Controllers found"/"Command completed" lines: "Write-cache setting : Enabled", status On.
    file: 'arcconf/netdata-getconfig-LD-current.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        readOnly: true,
        drives: [['arcconf:1/ld0', 'always-write-back', 'always-write-back', true]],
        safe: false,
        critical: true,
      },
    ],
  },
  {
    // "Write-cache setting : Enabled", "Write-cache status : On".
    file: 'arcconf/netdata-getconfig-LD-old.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        drives: [['arcconf:1/ld0', 'always-write-back', 'always-write-back', true]],
        safe: false,
        critical: true,
      },
    ],
  },
  {
    file: 'arcconf/netdata-getconfig-PD-current.txt',
    tool: 'arcconf',
    controllers: [{ id: 'arcconf:1', drives: [], safe: false, critical: false }],
  },
  {
    file: 'arcconf/netdata-getconfig-PD-old.txt',
    tool: 'arcconf',
    controllers: [{ id: 'arcconf:1', drives: [], safe: false, critical: false }],
  },
  {
    file: 'arcconf/netdata-getconfig-PD-with-enclosure.txt',
    tool: 'arcconf',
    controllers: [{ id: 'arcconf:1', drives: [], safe: false, critical: false }],
  },
  {
    // Adaptec 3405: battery "Status : Optimal"; "Write-cache setting : Enabled (write-back) when protected by battery".
    file: 'arcconf/percona-arcconf-3405-battery-optimal.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        model: 'Adaptec 3405',
        protection: OPTIMAL_BBU,
        drives: [['arcconf:1/ld0', 'write-back', 'write-back', false]],
        safe: true,
        critical: false,
      },
    ],
  },
  {
    // "Controller Mode : HBA", no cache.
    file: 'arcconf/pyarcconf-HBA1100-getconfig-AD.txt',
    tool: 'arcconf',
    controllers: [{ id: 'arcconf:1', mode: 'hba', drives: [], safe: false, critical: false }],
  },
  {
    // LD 0 and 1 "Caching : Disabled", "LD Acceleration Method : None".
    file: 'arcconf/pyarcconf-SmartRAID-getconfig-LD-caching-disabled.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        readOnly: true,
        drives: [
          ['arcconf:1/ld0', 'write-through', 'write-through', null],
          ['arcconf:1/ld1', 'write-through', 'write-through', null],
        ],
        safe: false,
        critical: false,
      },
    ],
  },
  {
    // SmartRAID 3204: "Cache Status : Not Configured", "No-Battery Write Cache : Disabled", "Controller Mode : Mixed".
    file: 'arcconf/pyarcconf-SmartRAID3204-getconfig-AD-cache-not-configured.txt',
    tool: 'arcconf',
    controllers: [{ id: 'arcconf:1', mode: 'mixed', drives: [], safe: false, critical: false }],
  },
  {
    file: 'arcconf/pyarcconf-SmartRAID3204-getversion.txt',
    tool: 'arcconf',
    controllers: [{ id: 'arcconf:1', drives: [], safe: false, critical: false }],
  },
  {
    // "Controller 1: : Optimal, Slot 10, Mixed, Adaptec SmartRAID 3204-8i, ..."
    file: 'arcconf/pyarcconf-SmartRAID3204-list.txt',
    tool: 'arcconf',
    controllers: [
      {
        id: 'arcconf:1',
        model: 'Adaptec SmartRAID 3204-8i',
        healthy: true,
        mode: 'mixed',
        drives: [],
        safe: false,
        critical: false,
      },
    ],
  },
];
