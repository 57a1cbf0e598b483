/** The error `fn` throws; fails the test when it throws none. */
export function errorOf(fn: () => unknown): any {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('no error');
}
