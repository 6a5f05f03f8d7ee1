/** The people pages in a browser (users, deposits, withdrawals, one player): registered by Console.test.ts. */
export const peopleScenarios = () => {}
