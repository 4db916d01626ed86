import { SaxesParser } from 'saxes';

/** An element of a parsed document: its name, attributes, children, and all the text inside it. */
export interface XmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: XmlElement[];
  text: string;
}

/**
 * Parses XML with a conforming parser (saxes: well-formedness, legal characters, namespaces): anything
 * a browser would refuse to show throws here (saxes throws where no error handler is set).
 */
export function parseXml(xml: string): XmlElement {
  const parser = new SaxesParser({ xmlns: true });
  const root: XmlElement = { name: '#document', attributes: {}, children: [], text: '' };
  const open: XmlElement[] = [root];
  parser.on('opentag', (tag) => {
    const attributes = Object.fromEntries(Object.values(tag.attributes).map((a) => [a.name, a.value]));
    const element: XmlElement = { name: tag.name, attributes, children: [], text: '' };
    open.at(-1)?.children.push(element);
    open.push(element);
  });
  parser.on('text', (text) => {
    for (const element of open) element.text += text;
  });
  parser.on('closetag', () => void open.pop());
  parser.write(xml).close();
  const [document] = root.children;
  if (!document) throw new Error('no root element');
  return document;
}

/** Every element under `root` (itself included), in document order. */
export function descendants(root: XmlElement): XmlElement[] {
  return [root, ...root.children.flatMap(descendants)];
}

/** The elements under `root` whose `class` holds `name`, in document order. */
export function byClass(root: XmlElement, name: string): XmlElement[] {
  return descendants(root).filter((e) => (e.attributes.class ?? '').split(' ').includes(name));
}

/** A heat map's cells (row by row), each as its class, its rectangle's fill and outline, its text and that text's fill. */
export function heatmapCells(svg: string): { kind: string; fill: string; dashed: boolean; text: string; ink: string }[] {
  return byClass(parseXml(svg), 'cell').map((cell) => {
    const rect = cell.children.find((c) => c.name === 'rect');
    const text = cell.children.find((c) => c.name === 'text');
    return {
      kind: cell.attributes.class ?? '',
      fill: rect?.attributes.fill ?? '',
      dashed: rect?.attributes['stroke-dasharray'] !== undefined,
      text: text?.text ?? '',
      ink: text?.attributes.fill ?? '',
    };
  });
}
