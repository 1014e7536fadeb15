import { describe, expect, it } from 'vitest';
import { preparedExportRoom } from '../../../../src/store/sqljs/exportRoom.ts';

describe('preparedExportRoom', () => {
  it('gives a zeroed room for the database and its growth meanwhile', async () => {
    const room = await preparedExportRoom(10 * 1024 * 1024);
    expect(room.length).toBeGreaterThanOrEqual(10 * 1024 * 1024 + 8 * 1024 * 1024);
    expect(room.every((byte) => byte === 0)).toBe(true);
  });

  it('lets other work run while it touches the memory', async () => {
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    try {
      await preparedExportRoom(64 * 1024 * 1024);
    } finally {
      clearInterval(ticking);
    }
    // 64 MiB is touched over about 36 turns of the event loop; a timer runs between them.
    expect(turns).toBeGreaterThan(0);
  });
});
