declare module '*.wgsl?raw' {
  const text: string;
  export default text;
}
