/** pg's conversion of a parameter to what it sends (pg/lib/utils.js), which @types/pg does not declare. */
declare module "pg/lib/utils.js" {
  const utils: { readonly prepareValue: (value: unknown) => unknown }
  export default utils
}
