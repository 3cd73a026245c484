/**
 * @module
 * Numbers and plurals for the string tables, through `Intl`: `n(3)` is 3 written as the language writes it, and
 * `plural(3, {one, few, other, …})` picks the form the language's plural rules call for, with `#` for the number.
 */
export function formats(language: string) {
  const numbers = new Intl.NumberFormat(language);
  const rules = new Intl.PluralRules(language);
  return {
    n: (x: number) => numbers.format(x),
    plural: (x: number, forms: Partial<Record<Intl.LDMLPluralRule, string>> & { other: string }) =>
      (forms[rules.select(x)] ?? forms.other).replace('#', numbers.format(x)),
  };
}
